-- Indexes for the lookups evaluation makes per delivery that no index served (sequential scans
-- that grow with the table): a workflow_job delivery names no pull request, so evaluation finds
-- it by the repository and head commit (evaluation/facts.ts, origin); a release cut from a
-- branch reads the tag's newest pipeline. evaluation/lookup-indexes.int.test.ts checks the plans.
CREATE INDEX "PullRequest_repositoryId_headSha_idx" ON "PullRequest"("repositoryId", "headSha");

CREATE INDEX "Pipeline_repositoryId_headBranch_createdAt_idx" ON "Pipeline"("repositoryId", "headBranch", "createdAt");
