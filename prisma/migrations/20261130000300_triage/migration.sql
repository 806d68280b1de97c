-- Triage in the loop: the CI-triage decision for each failed pipeline attempt and the one
-- action taken on it (rerun, dispatch, notify, roll-back request).

-- CreateEnum
CREATE TYPE "TriageDisposition" AS ENUM ('rerun_once', 'fix_forward', 'escalate_to_owner', 'roll_back');

-- CreateEnum
CREATE TYPE "TriageActionKind" AS ENUM ('rerun_check', 'dispatch_runs', 'notify_owner', 'roll_back_request');

-- CreateEnum
CREATE TYPE "TriageActionStatus" AS ENUM ('pending', 'requested', 'done', 'awaiting_approval', 'failed');

-- CreateTable
CREATE TABLE "TriageDecision" (
    "id" TEXT NOT NULL,
    "key" TEXT NOT NULL,
    "repositoryId" TEXT NOT NULL,
    "pipelineId" TEXT NOT NULL,
    "jobId" TEXT,
    "headSha" TEXT NOT NULL,
    "policyDecisionId" TEXT,
    "disposition" "TriageDisposition" NOT NULL,
    "refusal" TEXT,
    "action" "TriageActionKind" NOT NULL,
    "actionStatus" "TriageActionStatus" NOT NULL,
    "actionDetail" TEXT NOT NULL DEFAULT '',
    "rerunKey" TEXT,
    "rerunVia" TEXT,
    "rerunExternalId" TEXT,
    "runId" TEXT,
    "notificationId" TEXT,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "TriageDecision_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "TriageDecision_key_key" ON "TriageDecision"("key");

-- CreateIndex
CREATE UNIQUE INDEX "TriageDecision_policyDecisionId_key" ON "TriageDecision"("policyDecisionId");

-- CreateIndex
CREATE UNIQUE INDEX "TriageDecision_rerunKey_key" ON "TriageDecision"("rerunKey");

-- CreateIndex
CREATE INDEX "TriageDecision_repositoryId_createdAt_idx" ON "TriageDecision"("repositoryId", "createdAt");

-- CreateIndex
CREATE INDEX "TriageDecision_pipelineId_idx" ON "TriageDecision"("pipelineId");

-- CreateIndex
CREATE INDEX "TriageDecision_runId_idx" ON "TriageDecision"("runId");

-- AddForeignKey
ALTER TABLE "TriageDecision" ADD CONSTRAINT "TriageDecision_pipelineId_fkey" FOREIGN KEY ("pipelineId") REFERENCES "Pipeline"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "TriageDecision" ADD CONSTRAINT "TriageDecision_policyDecisionId_fkey" FOREIGN KEY ("policyDecisionId") REFERENCES "PolicyDecision"("id") ON DELETE SET NULL ON UPDATE CASCADE;
