-- Triage's roll_back disposition becomes a write-back: a revert of the failing deploy's change or
-- a rerun of the last good deploy, as the repository chooses; it always waits for a person.

-- AlterEnum
ALTER TYPE "WriteBackKind" ADD VALUE 'roll_back';

-- CreateEnum
CREATE TYPE "RollBackMode" AS ENUM ('revert', 'rerun_last_good');

-- AlterTable
ALTER TABLE "Repository" ADD COLUMN "rollBackMode" "RollBackMode" NOT NULL DEFAULT 'revert';
