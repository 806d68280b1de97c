// Events and rules for the trigger tests: one realistic event per trigger kind, and a rule
// factory shaped like a Prisma TriggerRule row.
import { zCiEvent, type CiEvent } from "@/server/domain/ci-events/ci-event";
import type { ForgeActor, RepositoryRef } from "@/server/domain/ci-events/ci-event";
import type { RepositoryFacts } from "./match-types";
import type { TriggerRule } from "./trigger-rule";

export const REPO: RepositoryFacts = {
  id: "repo_web",
  fullName: "acme/web",
  autoRunOnFailedCheck: false,
  dispatchLabel: "agent:diagnose",
};

const repository: RepositoryRef = {
  fullName: "acme/web",
  cloneUrl: "https://github.com/acme/web.git",
  htmlUrl: "https://github.com/acme/web",
  defaultBranch: "main",
  visibility: "private",
};

export const HEAD = "aa00bb11cc22dd33ee44ff5566778899aabbccdd";
export const SIG = "077fcdd2482487b2";

export const actor = (login: string, patch: Partial<ForgeActor> = {}): ForgeActor => ({
  login,
  type: "user",
  association: "MEMBER",
  airlockRole: null,
  ...patch,
});

const pr = {
  number: 12,
  url: "https://github.com/acme/web/pull/12",
  headRef: "feature/dates",
  headSha: HEAD,
  headRepoFullName: "acme/web",
  baseRef: "main",
  baseSha: "f95f852bd8fca8fcc58a9a2d6c842781e32a215e",
  isFork: false,
};

export function failedCheck(patch: Partial<Extract<CiEvent, { type: "failed_check" }>> = {}): CiEvent {
  return zCiEvent.parse({
    type: "failed_check",
    origin: "github",
    via: "workflow_job",
    level: "job",
    repository,
    actor: actor("octocat"),
    headSha: HEAD,
    headBranch: "feature/dates",
    triggerEvent: "pull_request",
    pullRequests: [pr],
    isFork: false,
    workflowName: "CI",
    jobName: "test (ubuntu-latest, 20)",
    checkName: "test (ubuntu-latest, 20)",
    step: "Run npm test",
    runId: "940463255",
    jobId: "2832853555",
    runAttempt: 1,
    url: "https://github.com/acme/web/actions/runs/940463255/job/2832853555",
    conclusion: "failure",
    startedAt: null,
    completedAt: null,
    runnerLabels: ["ubuntu-latest"],
    runnerName: null,
    ...patch,
  });
}

export function prComment(patch: Partial<Extract<CiEvent, { type: "pr_comment" }>> = {}): CiEvent {
  return zCiEvent.parse({
    type: "pr_comment",
    origin: "github",
    repository,
    actor: actor("octocat"),
    pullRequest: { number: 12, url: pr.url, title: "Relative dates", state: "open", author: "octocat" },
    command: "diagnose",
    args: "",
    handle: "@agent",
    commentId: "492700400",
    commentUrl: null,
    body: "@agent diagnose",
    ...patch,
  });
}

const snapshot = {
  ...pr,
  title: "Relative dates",
  body: "",
  author: "octocat",
  authorAssociation: "MEMBER",
  state: "open",
  draft: false,
  merged: false,
  mergeable: null,
  labels: ["agent:diagnose"],
  changedFilesCount: 2,
} as const;

export function prLabeled(label = "agent:diagnose", patch: Partial<Extract<CiEvent, { type: "pr_labeled" }>> = {}): CiEvent {
  return zCiEvent.parse({
    type: "pr_labeled",
    origin: "github",
    repository,
    actor: actor("octocat", { association: null }),
    pullRequest: snapshot,
    label,
    ...patch,
  });
}

export function checkRerun(patch: Partial<Extract<CiEvent, { type: "check_rerun" }>> = {}): CiEvent {
  return zCiEvent.parse({
    type: "check_rerun",
    origin: "airlock",
    repository,
    actor: actor("octocat", { association: null, airlockRole: "maintainer" }),
    originalRunId: "run_41",
    approvalId: "appr_7",
    approvedArtifactDigest: "sha256:1a3c5e7f9b2d4f6a8c0e2b4d6f8a0c2e4b6d8f0a2c4e6b8d0f2a4c6e8b0d2f4a",
    target: { workflowName: "CI", jobName: "test (ubuntu-latest, 20)", step: "Run npm test", checkName: "test (ubuntu-latest, 20)" },
    headSha: HEAD,
    headBranch: "feature/dates",
    pullRequestNumber: 12,
    ...patch,
  });
}

export function release(patch: Partial<Extract<CiEvent, { type: "release" }>> = {}): CiEvent {
  return zCiEvent.parse({
    type: "release",
    origin: "github",
    via: "publish_workflow",
    repository,
    actor: actor("release-bot", { type: "bot", association: null }),
    tag: "v1.2.0",
    version: "1.2.0",
    commitSha: "6113728f27ae82c7b1a177c8d03f9e96e0adf246",
    targetCommitish: "main",
    name: "v1.2.0",
    prerelease: false,
    url: null,
    workflowName: "Publish",
    assets: [
      { name: "web-1.2.0.tgz", contentType: "application/gzip", sizeBytes: 1, url: null, digest: "sha256:bbb" },
      { name: "SHA256SUMS", contentType: "text/plain", sizeBytes: 1, url: null, digest: "sha256:aaa" },
    ],
    ...patch,
  });
}

export function flakyScan(patch: Partial<Extract<CiEvent, { type: "flaky_scan" }>> = {}): CiEvent {
  return zCiEvent.parse({
    type: "flaky_scan",
    origin: "airlock",
    repository,
    actor: actor("airlock-scheduler", { type: "bot", association: null }),
    signature: SIG,
    workflowName: "CI",
    jobName: "test (ubuntu-latest, 20)",
    testNames: ["src/lib/date.test.ts > formatRelative > handles the DST switch"],
    branch: "main",
    paths: ["src/lib/date.ts", "src/lib/date.test.ts"],
    queryDigest: "5d41402abc4b2a76b9719d911017c592",
    resultSetDigest: "7d793037a0760186574b0282f2f435e7",
    window: { from: "2025-04-01T00:00:00Z", to: "2025-04-08T00:00:00Z" },
    occurrences: 6,
    ...patch,
  });
}

export function manual(patch: Partial<Extract<CiEvent, { type: "manual" }>> = {}): CiEvent {
  return zCiEvent.parse({
    type: "manual",
    origin: "airlock",
    repository,
    actor: actor("octocat", { association: null, airlockRole: "maintainer" }),
    taskKind: "diagnose",
    ruleId: null,
    pullRequestNumber: 12,
    headSha: HEAD,
    headBranch: "feature/dates",
    workflowName: "CI",
    jobName: "test (ubuntu-latest, 20)",
    step: "Run npm test",
    ...patch,
  });
}

export function rule(patch: Partial<TriggerRule> & Pick<TriggerRule, "kind">): TriggerRule {
  return {
    id: `rule_${patch.kind}`,
    name: `${patch.kind} rule`,
    repositoryId: null,
    workflow: null,
    job: null,
    step: null,
    branchGlob: null,
    pathFilters: [],
    failureSignature: null,
    stackId: "stack_diagnoser",
    taskKind: "diagnose",
    action: "suggest",
    enabled: true,
    ...patch,
  };
}
