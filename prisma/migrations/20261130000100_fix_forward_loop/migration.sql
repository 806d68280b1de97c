-- Red-check attribution and the bounded fix-forward loop: CI observations before agent passes,
-- fix-run spawn intents (the attempt bound), the loop's state per branch, the escalation labels.

-- CreateEnum
CREATE TYPE "FixSpawnKind" AS ENUM ('fix', 'escalate');

-- CreateEnum
CREATE TYPE "FixSpawnOutcome" AS ENUM ('pending', 'launched', 'failed');

-- AlterTable
ALTER TABLE "Repository" ADD COLUMN     "agentReadyLabel" TEXT NOT NULL DEFAULT 'ready-for-agent',
ADD COLUMN     "humanReadyLabel" TEXT NOT NULL DEFAULT 'ready-for-human';

-- CreateTable
CREATE TABLE "CiObservation" (
    "id" TEXT NOT NULL,
    "repositoryId" TEXT NOT NULL,
    "branch" TEXT NOT NULL,
    "pullRequestId" TEXT,
    "runId" TEXT,
    "attemptId" TEXT,
    "headSha" TEXT NOT NULL,
    "checks" JSONB NOT NULL,
    "leftEdits" BOOLEAN NOT NULL DEFAULT false,
    "observedAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "CiObservation_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "FixSpawnIntent" (
    "id" TEXT NOT NULL,
    "repositoryId" TEXT NOT NULL,
    "branch" TEXT NOT NULL,
    "kind" "FixSpawnKind" NOT NULL,
    "pullRequestId" TEXT,
    "dedupeKey" TEXT NOT NULL,
    "rejection" TEXT NOT NULL,
    "rejectedBy" TEXT NOT NULL,
    "parentRunId" TEXT,
    "runId" TEXT,
    "outcome" "FixSpawnOutcome" NOT NULL DEFAULT 'pending',
    "error" TEXT,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "FixSpawnIntent_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "FixLoopState" (
    "id" TEXT NOT NULL,
    "repositoryId" TEXT NOT NULL,
    "branch" TEXT NOT NULL,
    "pullRequestId" TEXT,
    "escalatedAt" TIMESTAMPTZ(3),
    "escalationDigest" TEXT,
    "resetAt" TIMESTAMPTZ(3),
    "resetBy" TEXT,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "FixLoopState_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "CiObservation_attemptId_key" ON "CiObservation"("attemptId");

-- CreateIndex
CREATE INDEX "CiObservation_repositoryId_branch_observedAt_idx" ON "CiObservation"("repositoryId", "branch", "observedAt");

-- CreateIndex
CREATE UNIQUE INDEX "FixSpawnIntent_dedupeKey_key" ON "FixSpawnIntent"("dedupeKey");

-- CreateIndex
CREATE INDEX "FixSpawnIntent_repositoryId_branch_kind_createdAt_idx" ON "FixSpawnIntent"("repositoryId", "branch", "kind", "createdAt");

-- CreateIndex
CREATE UNIQUE INDEX "FixLoopState_repositoryId_branch_key" ON "FixLoopState"("repositoryId", "branch");
