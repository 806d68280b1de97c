-- Airlock's own check run on a GitHub pull request for a suggested run (issue 18, item 4).
CREATE TABLE "CheckRunSurface" (
    "id" TEXT NOT NULL,
    "runId" TEXT NOT NULL,
    "repositoryId" TEXT NOT NULL,
    "installationId" BIGINT NOT NULL,
    "headSha" TEXT NOT NULL,
    "externalId" BIGINT,
    "state" TEXT,
    "lastError" TEXT,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMPTZ(3) NOT NULL,
    CONSTRAINT "CheckRunSurface_pkey" PRIMARY KEY ("id")
);
CREATE UNIQUE INDEX "CheckRunSurface_runId_key" ON "CheckRunSurface"("runId");
CREATE UNIQUE INDEX "CheckRunSurface_externalId_key" ON "CheckRunSurface"("externalId");
ALTER TABLE "CheckRunSurface" ADD CONSTRAINT "CheckRunSurface_runId_fkey" FOREIGN KEY ("runId") REFERENCES "AgentDispatchRun"("id") ON DELETE CASCADE ON UPDATE CASCADE;
