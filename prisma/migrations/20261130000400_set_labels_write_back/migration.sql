-- The fix-forward escalation's label flip (ready-for-agent -> ready-for-human) is a write-back
-- like any other: it goes through the change gate and, unless exempt, waits for approval.

-- AlterEnum
ALTER TYPE "WriteBackKind" ADD VALUE 'set_labels';
