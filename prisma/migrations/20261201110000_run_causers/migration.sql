-- Everyone who caused a run's work (issue 14, item 4): the two-person rule refuses each of them
-- as the approver of the run's write-backs. A child run inherits its parent's causers.

-- CreateEnum
CREATE TYPE "RunCause" AS ENUM ('started', 'dispatched', 'retried', 'resumed', 'continued', 'forked', 'attached_context', 'rejected');

-- CreateTable
CREATE TABLE "RunCauser" (
    "id" TEXT NOT NULL,
    "runId" TEXT NOT NULL,
    "userId" TEXT NOT NULL,
    "cause" "RunCause" NOT NULL,
    "sourceRunId" TEXT NOT NULL,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "RunCauser_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "RunCauser_runId_userId_cause_sourceRunId_key" ON "RunCauser"("runId", "userId", "cause", "sourceRunId");

-- CreateIndex
CREATE INDEX "RunCauser_userId_idx" ON "RunCauser"("userId");

-- AddForeignKey
ALTER TABLE "RunCauser" ADD CONSTRAINT "RunCauser_runId_fkey" FOREIGN KEY ("runId") REFERENCES "AgentDispatchRun"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "RunCauser" ADD CONSTRAINT "RunCauser_userId_fkey" FOREIGN KEY ("userId") REFERENCES "User"("id") ON DELETE CASCADE ON UPDATE CASCADE;
