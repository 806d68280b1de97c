-- A rejection that arrives while a run is live on its branch is kept on the branch's loop state
-- and taken up when the last live run ends (issue 9, item 3).
ALTER TABLE "FixLoopState" ADD COLUMN "deferredKey" TEXT,
ADD COLUMN "deferredText" TEXT,
ADD COLUMN "deferredBy" TEXT,
ADD COLUMN "deferredRejectedRunId" TEXT,
ADD COLUMN "deferredPullRequestId" TEXT,
ADD COLUMN "deferredAt" TIMESTAMPTZ(3),
ADD COLUMN "deferredBehindRunId" TEXT;
