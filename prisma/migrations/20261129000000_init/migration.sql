-- Initial schema: generated from prisma/schema.prisma (prisma migrate diff --from-empty), then reviewed.

-- CreateEnum
CREATE TYPE "RepoRole" AS ENUM ('viewer', 'maintainer', 'admin');

-- CreateEnum
CREATE TYPE "Visibility" AS ENUM ('public', 'private', 'internal');

-- CreateEnum
CREATE TYPE "ForgeKind" AS ENUM ('local', 'github');

-- CreateEnum
CREATE TYPE "RunStatus" AS ENUM ('suggested', 'queued', 'running', 'awaiting_approval', 'succeeded', 'failed', 'cancelled', 'escalated');

-- CreateEnum
CREATE TYPE "AttemptStatus" AS ENUM ('queued', 'starting', 'running', 'succeeded', 'failed', 'cancelled', 'timed_out', 'lost');

-- CreateEnum
CREATE TYPE "TaskKind" AS ENUM ('diagnose', 'repair', 'triage', 'release_review');

-- CreateEnum
CREATE TYPE "TriggerKind" AS ENUM ('failed_check', 'pr_comment', 'label', 'check_rerun', 'release', 'flaky_scan', 'manual');

-- CreateEnum
CREATE TYPE "RunSource" AS ENUM ('failed_check', 'check_rerun', 'pr_comment', 'label', 'release', 'flaky_scan', 'manual', 'review', 'fork', 'resume');

-- CreateEnum
CREATE TYPE "TriggerAction" AS ENUM ('suggest', 'auto_run');

-- CreateEnum
CREATE TYPE "TrustTier" AS ENUM ('trusted', 'untrusted');

-- CreateEnum
CREATE TYPE "PoolKind" AS ENUM ('local', 'kubernetes');

-- CreateEnum
CREATE TYPE "AdapterKind" AS ENUM ('command', 'scripted');

-- CreateEnum
CREATE TYPE "ApprovalMode" AS ENUM ('always', 'exceptions_allowed');

-- CreateEnum
CREATE TYPE "PipelineStatus" AS ENUM ('queued', 'in_progress', 'completed');

-- CreateEnum
CREATE TYPE "CheckConclusion" AS ENUM ('success', 'failure', 'cancelled', 'timed_out', 'skipped', 'neutral', 'action_required', 'startup_failure', 'stale');

-- CreateEnum
CREATE TYPE "ArtifactKind" AS ENUM ('patch', 'diagnosis', 'report', 'log');

-- CreateEnum
CREATE TYPE "WriteBackKind" AS ENUM ('push_commits', 'update_pr_branch', 'open_pr', 'comment', 'review', 'approve_review', 'rerun_workflow', 'publish_release', 'privileged_capability');

-- CreateEnum
CREATE TYPE "ApprovalStatus" AS ENUM ('pending', 'approved', 'rejected', 'expired', 'executed', 'failed');

-- CreateEnum
CREATE TYPE "WriteBackOutcome" AS ENUM ('pending', 'succeeded', 'failed');

-- CreateEnum
CREATE TYPE "DeliveryOutcome" AS ENUM ('received', 'processed', 'ignored', 'duplicate', 'rejected', 'failed');

-- CreateEnum
CREATE TYPE "PolicyKind" AS ENUM ('ci_triage', 'change_gate', 'runner_selection', 'attribution');

-- CreateTable
CREATE TABLE "User" (
    "id" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "email" TEXT NOT NULL,
    "emailVerified" BOOLEAN NOT NULL DEFAULT false,
    "image" TEXT,
    "isAdmin" BOOLEAN NOT NULL DEFAULT false,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "User_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "Session" (
    "id" TEXT NOT NULL,
    "expiresAt" TIMESTAMPTZ(3) NOT NULL,
    "token" TEXT NOT NULL,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMPTZ(3) NOT NULL,
    "ipAddress" TEXT,
    "userAgent" TEXT,
    "userId" TEXT NOT NULL,

    CONSTRAINT "Session_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "Account" (
    "id" TEXT NOT NULL,
    "accountId" TEXT NOT NULL,
    "providerId" TEXT NOT NULL,
    "userId" TEXT NOT NULL,
    "accessToken" TEXT,
    "refreshToken" TEXT,
    "idToken" TEXT,
    "accessTokenExpiresAt" TIMESTAMPTZ(3),
    "refreshTokenExpiresAt" TIMESTAMPTZ(3),
    "scope" TEXT,
    "password" TEXT,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "Account_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "Verification" (
    "id" TEXT NOT NULL,
    "identifier" TEXT NOT NULL,
    "value" TEXT NOT NULL,
    "expiresAt" TIMESTAMPTZ(3) NOT NULL,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "Verification_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "Repository" (
    "id" TEXT NOT NULL,
    "fullName" TEXT NOT NULL,
    "forge" "ForgeKind" NOT NULL DEFAULT 'local',
    "defaultBranch" TEXT NOT NULL DEFAULT 'main',
    "cloneUrl" TEXT NOT NULL,
    "visibility" "Visibility" NOT NULL DEFAULT 'private',
    "trustTier" "TrustTier" NOT NULL DEFAULT 'trusted',
    "checkCommand" TEXT,
    "autoRunOnFailedCheck" BOOLEAN NOT NULL DEFAULT false,
    "botCommentsAllowed" BOOLEAN NOT NULL DEFAULT false,
    "twoPersonRule" BOOLEAN NOT NULL DEFAULT true,
    "writeBackExceptions" "WriteBackKind"[] DEFAULT ARRAY[]::"WriteBackKind"[],
    "botHandle" TEXT NOT NULL DEFAULT '@agent',
    "dispatchLabel" TEXT NOT NULL DEFAULT 'agent:diagnose',
    "maxFixAttempts" INTEGER NOT NULL DEFAULT 3,
    "version" INTEGER NOT NULL DEFAULT 1,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "Repository_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "Membership" (
    "id" TEXT NOT NULL,
    "userId" TEXT NOT NULL,
    "repositoryId" TEXT NOT NULL,
    "role" "RepoRole" NOT NULL,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "Membership_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "PullRequest" (
    "id" TEXT NOT NULL,
    "repositoryId" TEXT NOT NULL,
    "number" INTEGER NOT NULL,
    "title" TEXT NOT NULL,
    "body" TEXT NOT NULL DEFAULT '',
    "author" TEXT NOT NULL,
    "headRef" TEXT NOT NULL,
    "headSha" TEXT NOT NULL,
    "baseRef" TEXT NOT NULL,
    "baseSha" TEXT,
    "isFork" BOOLEAN NOT NULL DEFAULT false,
    "headRepoFullName" TEXT,
    "labels" TEXT[] DEFAULT ARRAY[]::TEXT[],
    "changedFiles" TEXT[] DEFAULT ARRAY[]::TEXT[],
    "state" TEXT NOT NULL DEFAULT 'open',
    "reviewState" TEXT,
    "mergeable" BOOLEAN,
    "url" TEXT,
    "escalatedAt" TIMESTAMPTZ(3),
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "PullRequest_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "Pipeline" (
    "id" TEXT NOT NULL,
    "repositoryId" TEXT NOT NULL,
    "pullRequestId" TEXT,
    "workflowName" TEXT NOT NULL,
    "checkName" TEXT NOT NULL,
    "externalId" TEXT NOT NULL,
    "status" "PipelineStatus" NOT NULL,
    "conclusion" "CheckConclusion",
    "headSha" TEXT NOT NULL,
    "headBranch" TEXT,
    "event" TEXT,
    "url" TEXT,
    "triggeredByRunId" TEXT,
    "startedAt" TIMESTAMPTZ(3),
    "completedAt" TIMESTAMPTZ(3),
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "Pipeline_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "Job" (
    "id" TEXT NOT NULL,
    "pipelineId" TEXT NOT NULL,
    "externalId" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "step" TEXT,
    "status" "PipelineStatus" NOT NULL,
    "conclusion" "CheckConclusion",
    "exitCode" INTEGER,
    "runnerPool" TEXT,
    "image" TEXT,
    "durationMs" INTEGER,
    "logExcerpt" TEXT NOT NULL DEFAULT '',
    "logExcerptStartLine" INTEGER NOT NULL DEFAULT 1,
    "failureSignature" TEXT,
    "failingTests" TEXT[] DEFAULT ARRAY[]::TEXT[],
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "Job_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "AgentStack" (
    "id" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "description" TEXT NOT NULL DEFAULT '',
    "version" INTEGER NOT NULL DEFAULT 1,
    "archivedAt" TIMESTAMPTZ(3),
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "AgentStack_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "AgentStackVersion" (
    "id" TEXT NOT NULL,
    "stackId" TEXT NOT NULL,
    "version" INTEGER NOT NULL,
    "spec" JSONB NOT NULL,
    "digest" TEXT NOT NULL,
    "createdById" TEXT,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "AgentStackVersion_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "ServiceAccount" (
    "id" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "namespace" TEXT NOT NULL DEFAULT 'airlock',
    "privileged" BOOLEAN NOT NULL DEFAULT false,
    "description" TEXT NOT NULL DEFAULT '',
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "ServiceAccount_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "RunnerPool" (
    "id" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "trustTier" "TrustTier" NOT NULL,
    "kind" "PoolKind" NOT NULL DEFAULT 'local',
    "concurrency" INTEGER NOT NULL DEFAULT 2,
    "allowedTaskKinds" "TaskKind"[] DEFAULT ARRAY[]::"TaskKind"[],
    "runtimeServiceAccountId" TEXT NOT NULL,
    "runnerServiceAccountId" TEXT NOT NULL,
    "version" INTEGER NOT NULL DEFAULT 1,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "RunnerPool_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "SecretGrant" (
    "id" TEXT NOT NULL,
    "secretName" TEXT NOT NULL,
    "stackId" TEXT,
    "privileged" BOOLEAN NOT NULL DEFAULT false,
    "trustedPoolsOnly" BOOLEAN NOT NULL DEFAULT true,
    "taskKinds" "TaskKind"[] DEFAULT ARRAY[]::"TaskKind"[],
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "SecretGrant_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "ConfigGrant" (
    "id" TEXT NOT NULL,
    "configMapName" TEXT NOT NULL,
    "stackId" TEXT,
    "trustedPoolsOnly" BOOLEAN NOT NULL DEFAULT false,
    "taskKinds" "TaskKind"[] DEFAULT ARRAY[]::"TaskKind"[],
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "ConfigGrant_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "TriggerRule" (
    "id" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "kind" "TriggerKind" NOT NULL,
    "repositoryId" TEXT,
    "workflow" TEXT,
    "job" TEXT,
    "step" TEXT,
    "branchGlob" TEXT,
    "pathFilters" TEXT[] DEFAULT ARRAY[]::TEXT[],
    "failureSignature" TEXT,
    "stackId" TEXT NOT NULL,
    "taskKind" "TaskKind" NOT NULL,
    "action" "TriggerAction" NOT NULL DEFAULT 'suggest',
    "enabled" BOOLEAN NOT NULL DEFAULT true,
    "version" INTEGER NOT NULL DEFAULT 1,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "TriggerRule_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "WebhookDelivery" (
    "id" TEXT NOT NULL,
    "deliveryId" TEXT NOT NULL,
    "source" "ForgeKind" NOT NULL,
    "event" TEXT NOT NULL,
    "action" TEXT,
    "payload" JSONB NOT NULL,
    "outcome" "DeliveryOutcome" NOT NULL DEFAULT 'received',
    "detail" TEXT,
    "receivedAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "processedAt" TIMESTAMPTZ(3),

    CONSTRAINT "WebhookDelivery_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "TriggerDrop" (
    "id" TEXT NOT NULL,
    "dedupeKey" TEXT,
    "reason" TEXT NOT NULL,
    "deliveryId" TEXT,
    "ruleId" TEXT,
    "runId" TEXT,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "TriggerDrop_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "AgentDispatchRun" (
    "id" TEXT NOT NULL,
    "number" SERIAL NOT NULL,
    "title" TEXT NOT NULL,
    "repositoryId" TEXT NOT NULL,
    "pullRequestId" TEXT,
    "pipelineId" TEXT,
    "jobId" TEXT,
    "source" "RunSource" NOT NULL,
    "taskKind" "TaskKind" NOT NULL,
    "triggerRuleId" TEXT,
    "actor" TEXT NOT NULL,
    "actorUserId" TEXT,
    "status" "RunStatus" NOT NULL,
    "headSha" TEXT NOT NULL,
    "headBranch" TEXT,
    "isFork" BOOLEAN NOT NULL DEFAULT false,
    "stackId" TEXT,
    "stackVersion" INTEGER,
    "stackSnapshot" JSONB NOT NULL,
    "stackDigest" TEXT NOT NULL,
    "contextBundle" JSONB NOT NULL,
    "contextDigest" TEXT NOT NULL,
    "prompt" TEXT NOT NULL,
    "promptHash" TEXT NOT NULL,
    "dedupeKey" TEXT NOT NULL,
    "parentRunId" TEXT,
    "runnerPoolId" TEXT,
    "admission" JSONB,
    "attribution" JSONB,
    "costUsd" DECIMAL(12,6) NOT NULL DEFAULT 0,
    "inputTokens" INTEGER NOT NULL DEFAULT 0,
    "outputTokens" INTEGER NOT NULL DEFAULT 0,
    "lastEventSeq" INTEGER NOT NULL DEFAULT 0,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "startedAt" TIMESTAMPTZ(3),
    "finishedAt" TIMESTAMPTZ(3),

    CONSTRAINT "AgentDispatchRun_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "DispatchAttempt" (
    "id" TEXT NOT NULL,
    "runId" TEXT NOT NULL,
    "number" INTEGER NOT NULL,
    "status" "AttemptStatus" NOT NULL,
    "fencingToken" INTEGER NOT NULL,
    "runnerPoolId" TEXT,
    "runtimeServiceAccount" TEXT,
    "runnerServiceAccount" TEXT,
    "workspacePath" TEXT,
    "adapterSessionId" TEXT,
    "runnerRef" TEXT,
    "heartbeatAt" TIMESTAMPTZ(3),
    "queuedAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "startedAt" TIMESTAMPTZ(3),
    "finishedAt" TIMESTAMPTZ(3),
    "exitReason" TEXT,
    "inputTokens" INTEGER NOT NULL DEFAULT 0,
    "outputTokens" INTEGER NOT NULL DEFAULT 0,
    "costUsd" DECIMAL(12,6) NOT NULL DEFAULT 0,

    CONSTRAINT "DispatchAttempt_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "RunEvent" (
    "runId" TEXT NOT NULL,
    "seq" INTEGER NOT NULL,
    "type" TEXT NOT NULL,
    "payload" JSONB NOT NULL,
    "attemptId" TEXT,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "RunEvent_pkey" PRIMARY KEY ("runId","seq")
);

-- CreateTable
CREATE TABLE "Artifact" (
    "id" TEXT NOT NULL,
    "runId" TEXT NOT NULL,
    "attemptId" TEXT,
    "kind" "ArtifactKind" NOT NULL,
    "name" TEXT NOT NULL,
    "content" TEXT,
    "location" TEXT,
    "mediaType" TEXT NOT NULL DEFAULT 'text/plain',
    "digest" TEXT NOT NULL,
    "sizeBytes" INTEGER NOT NULL,
    "retainUntil" TIMESTAMPTZ(3),
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "Artifact_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "ApprovalRequest" (
    "id" TEXT NOT NULL,
    "runId" TEXT NOT NULL,
    "action" "WriteBackKind" NOT NULL,
    "targetBranch" TEXT,
    "targetPrNumber" INTEGER,
    "targetCheck" TEXT,
    "targetHeadSha" TEXT,
    "artifactId" TEXT,
    "artifactDigest" TEXT,
    "presented" JSONB NOT NULL,
    "status" "ApprovalStatus" NOT NULL DEFAULT 'pending',
    "policyDecisionId" TEXT,
    "decidedById" TEXT,
    "decidedAt" TIMESTAMPTZ(3),
    "reason" TEXT,
    "expiresAt" TIMESTAMPTZ(3) NOT NULL,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "ApprovalRequest_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "WriteBack" (
    "id" TEXT NOT NULL,
    "approvalId" TEXT,
    "runId" TEXT NOT NULL,
    "attemptId" TEXT,
    "kind" "WriteBackKind" NOT NULL,
    "actor" TEXT NOT NULL,
    "approvedBy" TEXT,
    "triggerRuleId" TEXT,
    "stackDigest" TEXT NOT NULL,
    "contextDigest" TEXT NOT NULL,
    "promptHash" TEXT NOT NULL,
    "artifactDigest" TEXT,
    "target" JSONB NOT NULL,
    "idempotencyKey" TEXT NOT NULL,
    "externalRef" TEXT,
    "outcome" "WriteBackOutcome" NOT NULL DEFAULT 'pending',
    "error" TEXT,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "completedAt" TIMESTAMPTZ(3),

    CONSTRAINT "WriteBack_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "Policy" (
    "id" TEXT NOT NULL,
    "kind" "PolicyKind" NOT NULL,
    "name" TEXT NOT NULL,
    "description" TEXT NOT NULL DEFAULT '',
    "version" INTEGER NOT NULL DEFAULT 1,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "Policy_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "PolicyVersion" (
    "id" TEXT NOT NULL,
    "policyId" TEXT NOT NULL,
    "version" INTEGER NOT NULL,
    "definition" JSONB NOT NULL,
    "digest" TEXT NOT NULL,
    "createdById" TEXT,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "PolicyVersion_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "PolicyDecision" (
    "id" TEXT NOT NULL,
    "policyVersionId" TEXT NOT NULL,
    "runId" TEXT,
    "subject" TEXT NOT NULL,
    "facts" JSONB NOT NULL,
    "property" TEXT NOT NULL,
    "value" JSONB NOT NULL,
    "ruleName" TEXT,
    "proof" JSONB NOT NULL,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "PolicyDecision_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "AuditEntry" (
    "id" TEXT NOT NULL,
    "actorUserId" TEXT,
    "actor" TEXT NOT NULL,
    "action" TEXT NOT NULL,
    "objectType" TEXT NOT NULL,
    "objectId" TEXT NOT NULL,
    "repositoryId" TEXT,
    "detail" JSONB,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "AuditEntry_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "User_email_key" ON "User"("email");

-- CreateIndex
CREATE UNIQUE INDEX "Session_token_key" ON "Session"("token");

-- CreateIndex
CREATE INDEX "Session_userId_idx" ON "Session"("userId");

-- CreateIndex
CREATE INDEX "Account_userId_idx" ON "Account"("userId");

-- CreateIndex
CREATE INDEX "Verification_identifier_idx" ON "Verification"("identifier");

-- CreateIndex
CREATE UNIQUE INDEX "Repository_fullName_key" ON "Repository"("fullName");

-- CreateIndex
CREATE INDEX "Membership_repositoryId_idx" ON "Membership"("repositoryId");

-- CreateIndex
CREATE UNIQUE INDEX "Membership_userId_repositoryId_key" ON "Membership"("userId", "repositoryId");

-- CreateIndex
CREATE UNIQUE INDEX "PullRequest_repositoryId_number_key" ON "PullRequest"("repositoryId", "number");

-- CreateIndex
CREATE INDEX "Pipeline_pullRequestId_createdAt_idx" ON "Pipeline"("pullRequestId", "createdAt");

-- CreateIndex
CREATE UNIQUE INDEX "Pipeline_repositoryId_externalId_key" ON "Pipeline"("repositoryId", "externalId");

-- CreateIndex
CREATE INDEX "Job_failureSignature_idx" ON "Job"("failureSignature");

-- CreateIndex
CREATE UNIQUE INDEX "Job_pipelineId_externalId_key" ON "Job"("pipelineId", "externalId");

-- CreateIndex
CREATE UNIQUE INDEX "AgentStack_name_key" ON "AgentStack"("name");

-- CreateIndex
CREATE UNIQUE INDEX "AgentStackVersion_stackId_version_key" ON "AgentStackVersion"("stackId", "version");

-- CreateIndex
CREATE UNIQUE INDEX "ServiceAccount_name_key" ON "ServiceAccount"("name");

-- CreateIndex
CREATE UNIQUE INDEX "RunnerPool_name_key" ON "RunnerPool"("name");

-- CreateIndex
CREATE UNIQUE INDEX "SecretGrant_secretName_stackId_key" ON "SecretGrant"("secretName", "stackId");

-- CreateIndex
CREATE UNIQUE INDEX "ConfigGrant_configMapName_stackId_key" ON "ConfigGrant"("configMapName", "stackId");

-- CreateIndex
CREATE INDEX "TriggerRule_kind_enabled_idx" ON "TriggerRule"("kind", "enabled");

-- CreateIndex
CREATE UNIQUE INDEX "WebhookDelivery_deliveryId_key" ON "WebhookDelivery"("deliveryId");

-- CreateIndex
CREATE INDEX "WebhookDelivery_outcome_receivedAt_idx" ON "WebhookDelivery"("outcome", "receivedAt");

-- CreateIndex
CREATE INDEX "TriggerDrop_runId_idx" ON "TriggerDrop"("runId");

-- CreateIndex
CREATE INDEX "TriggerDrop_createdAt_idx" ON "TriggerDrop"("createdAt");

-- CreateIndex
CREATE UNIQUE INDEX "AgentDispatchRun_number_key" ON "AgentDispatchRun"("number");

-- CreateIndex
CREATE UNIQUE INDEX "AgentDispatchRun_dedupeKey_key" ON "AgentDispatchRun"("dedupeKey");

-- CreateIndex
CREATE INDEX "AgentDispatchRun_createdAt_id_idx" ON "AgentDispatchRun"("createdAt" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "AgentDispatchRun_repositoryId_createdAt_id_idx" ON "AgentDispatchRun"("repositoryId", "createdAt" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "AgentDispatchRun_status_createdAt_id_idx" ON "AgentDispatchRun"("status", "createdAt" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "AgentDispatchRun_pullRequestId_idx" ON "AgentDispatchRun"("pullRequestId");

-- CreateIndex
CREATE INDEX "AgentDispatchRun_parentRunId_idx" ON "AgentDispatchRun"("parentRunId");

-- CreateIndex
CREATE INDEX "DispatchAttempt_status_heartbeatAt_idx" ON "DispatchAttempt"("status", "heartbeatAt");

-- CreateIndex
CREATE UNIQUE INDEX "DispatchAttempt_runId_number_key" ON "DispatchAttempt"("runId", "number");

-- CreateIndex
CREATE INDEX "Artifact_runId_idx" ON "Artifact"("runId");

-- CreateIndex
CREATE INDEX "ApprovalRequest_status_createdAt_idx" ON "ApprovalRequest"("status", "createdAt");

-- CreateIndex
CREATE INDEX "ApprovalRequest_runId_idx" ON "ApprovalRequest"("runId");

-- CreateIndex
CREATE UNIQUE INDEX "WriteBack_approvalId_key" ON "WriteBack"("approvalId");

-- CreateIndex
CREATE UNIQUE INDEX "WriteBack_idempotencyKey_key" ON "WriteBack"("idempotencyKey");

-- CreateIndex
CREATE INDEX "WriteBack_runId_idx" ON "WriteBack"("runId");

-- CreateIndex
CREATE UNIQUE INDEX "Policy_kind_key" ON "Policy"("kind");

-- CreateIndex
CREATE UNIQUE INDEX "PolicyVersion_policyId_version_key" ON "PolicyVersion"("policyId", "version");

-- CreateIndex
CREATE INDEX "PolicyDecision_runId_createdAt_idx" ON "PolicyDecision"("runId", "createdAt");

-- CreateIndex
CREATE INDEX "AuditEntry_createdAt_idx" ON "AuditEntry"("createdAt" DESC);

-- CreateIndex
CREATE INDEX "AuditEntry_objectType_objectId_idx" ON "AuditEntry"("objectType", "objectId");

-- AddForeignKey
ALTER TABLE "Session" ADD CONSTRAINT "Session_userId_fkey" FOREIGN KEY ("userId") REFERENCES "User"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Account" ADD CONSTRAINT "Account_userId_fkey" FOREIGN KEY ("userId") REFERENCES "User"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Membership" ADD CONSTRAINT "Membership_userId_fkey" FOREIGN KEY ("userId") REFERENCES "User"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Membership" ADD CONSTRAINT "Membership_repositoryId_fkey" FOREIGN KEY ("repositoryId") REFERENCES "Repository"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "PullRequest" ADD CONSTRAINT "PullRequest_repositoryId_fkey" FOREIGN KEY ("repositoryId") REFERENCES "Repository"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Pipeline" ADD CONSTRAINT "Pipeline_repositoryId_fkey" FOREIGN KEY ("repositoryId") REFERENCES "Repository"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Pipeline" ADD CONSTRAINT "Pipeline_pullRequestId_fkey" FOREIGN KEY ("pullRequestId") REFERENCES "PullRequest"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Pipeline" ADD CONSTRAINT "Pipeline_triggeredByRunId_fkey" FOREIGN KEY ("triggeredByRunId") REFERENCES "AgentDispatchRun"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Job" ADD CONSTRAINT "Job_pipelineId_fkey" FOREIGN KEY ("pipelineId") REFERENCES "Pipeline"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "AgentStackVersion" ADD CONSTRAINT "AgentStackVersion_stackId_fkey" FOREIGN KEY ("stackId") REFERENCES "AgentStack"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "RunnerPool" ADD CONSTRAINT "RunnerPool_runtimeServiceAccountId_fkey" FOREIGN KEY ("runtimeServiceAccountId") REFERENCES "ServiceAccount"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "RunnerPool" ADD CONSTRAINT "RunnerPool_runnerServiceAccountId_fkey" FOREIGN KEY ("runnerServiceAccountId") REFERENCES "ServiceAccount"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "TriggerRule" ADD CONSTRAINT "TriggerRule_repositoryId_fkey" FOREIGN KEY ("repositoryId") REFERENCES "Repository"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "TriggerRule" ADD CONSTRAINT "TriggerRule_stackId_fkey" FOREIGN KEY ("stackId") REFERENCES "AgentStack"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "AgentDispatchRun" ADD CONSTRAINT "AgentDispatchRun_repositoryId_fkey" FOREIGN KEY ("repositoryId") REFERENCES "Repository"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "AgentDispatchRun" ADD CONSTRAINT "AgentDispatchRun_pullRequestId_fkey" FOREIGN KEY ("pullRequestId") REFERENCES "PullRequest"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "AgentDispatchRun" ADD CONSTRAINT "AgentDispatchRun_pipelineId_fkey" FOREIGN KEY ("pipelineId") REFERENCES "Pipeline"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "AgentDispatchRun" ADD CONSTRAINT "AgentDispatchRun_jobId_fkey" FOREIGN KEY ("jobId") REFERENCES "Job"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "AgentDispatchRun" ADD CONSTRAINT "AgentDispatchRun_triggerRuleId_fkey" FOREIGN KEY ("triggerRuleId") REFERENCES "TriggerRule"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "AgentDispatchRun" ADD CONSTRAINT "AgentDispatchRun_parentRunId_fkey" FOREIGN KEY ("parentRunId") REFERENCES "AgentDispatchRun"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "DispatchAttempt" ADD CONSTRAINT "DispatchAttempt_runId_fkey" FOREIGN KEY ("runId") REFERENCES "AgentDispatchRun"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "DispatchAttempt" ADD CONSTRAINT "DispatchAttempt_runnerPoolId_fkey" FOREIGN KEY ("runnerPoolId") REFERENCES "RunnerPool"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "RunEvent" ADD CONSTRAINT "RunEvent_runId_fkey" FOREIGN KEY ("runId") REFERENCES "AgentDispatchRun"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Artifact" ADD CONSTRAINT "Artifact_runId_fkey" FOREIGN KEY ("runId") REFERENCES "AgentDispatchRun"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Artifact" ADD CONSTRAINT "Artifact_attemptId_fkey" FOREIGN KEY ("attemptId") REFERENCES "DispatchAttempt"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "ApprovalRequest" ADD CONSTRAINT "ApprovalRequest_runId_fkey" FOREIGN KEY ("runId") REFERENCES "AgentDispatchRun"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "ApprovalRequest" ADD CONSTRAINT "ApprovalRequest_artifactId_fkey" FOREIGN KEY ("artifactId") REFERENCES "Artifact"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "ApprovalRequest" ADD CONSTRAINT "ApprovalRequest_decidedById_fkey" FOREIGN KEY ("decidedById") REFERENCES "User"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "ApprovalRequest" ADD CONSTRAINT "ApprovalRequest_policyDecisionId_fkey" FOREIGN KEY ("policyDecisionId") REFERENCES "PolicyDecision"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "WriteBack" ADD CONSTRAINT "WriteBack_approvalId_fkey" FOREIGN KEY ("approvalId") REFERENCES "ApprovalRequest"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "WriteBack" ADD CONSTRAINT "WriteBack_runId_fkey" FOREIGN KEY ("runId") REFERENCES "AgentDispatchRun"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "WriteBack" ADD CONSTRAINT "WriteBack_attemptId_fkey" FOREIGN KEY ("attemptId") REFERENCES "DispatchAttempt"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "PolicyVersion" ADD CONSTRAINT "PolicyVersion_policyId_fkey" FOREIGN KEY ("policyId") REFERENCES "Policy"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "PolicyDecision" ADD CONSTRAINT "PolicyDecision_policyVersionId_fkey" FOREIGN KEY ("policyVersionId") REFERENCES "PolicyVersion"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "PolicyDecision" ADD CONSTRAINT "PolicyDecision_runId_fkey" FOREIGN KEY ("runId") REFERENCES "AgentDispatchRun"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "AuditEntry" ADD CONSTRAINT "AuditEntry_actorUserId_fkey" FOREIGN KEY ("actorUserId") REFERENCES "User"("id") ON DELETE SET NULL ON UPDATE CASCADE;

