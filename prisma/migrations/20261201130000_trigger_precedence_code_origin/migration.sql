-- Trigger precedence and code origin (issue 18, item 5): a rule may fire alongside a more
-- specific one; a run records where its code comes from and why; branch pushes are remembered
-- so a workflow_job failure at a pushed commit is known to come from the repository itself.
CREATE TYPE "CodeOrigin" AS ENUM ('repository', 'fork', 'unknown');

ALTER TABLE "TriggerRule" ADD COLUMN "alsoFire" BOOLEAN NOT NULL DEFAULT false;

ALTER TABLE "AgentDispatchRun" ADD COLUMN "origin" "CodeOrigin",
ADD COLUMN "originReason" TEXT;

CREATE TABLE "PushedCommit" (
    "id" TEXT NOT NULL,
    "repositoryId" TEXT NOT NULL,
    "sha" TEXT NOT NULL,
    "branch" TEXT NOT NULL,
    "pusher" TEXT NOT NULL,
    "deliveryId" TEXT,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "PushedCommit_pkey" PRIMARY KEY ("id")
);

CREATE UNIQUE INDEX "PushedCommit_repositoryId_sha_key" ON "PushedCommit"("repositoryId", "sha");

ALTER TABLE "PushedCommit" ADD CONSTRAINT "PushedCommit_repositoryId_fkey" FOREIGN KEY ("repositoryId") REFERENCES "Repository"("id") ON DELETE CASCADE ON UPDATE CASCADE;
