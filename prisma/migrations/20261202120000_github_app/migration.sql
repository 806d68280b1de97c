-- GitHub App (issue 18, items 1 and 3): the app's sealed credentials, manifest-flow states,
-- repositories bound to their GitHub id and installation (and disabled when uninstalled), and
-- re-evaluations of a delivery from the deliveries page.
ALTER TABLE "Repository" ADD COLUMN "githubRepoId" BIGINT,
ADD COLUMN "githubInstallationId" BIGINT,
ADD COLUMN "disabledAt" TIMESTAMPTZ(3),
ADD COLUMN "disabledReason" TEXT;

CREATE UNIQUE INDEX "Repository_githubRepoId_key" ON "Repository"("githubRepoId");

ALTER TABLE "WebhookDelivery" ADD COLUMN "reevaluations" INTEGER NOT NULL DEFAULT 0,
ADD COLUMN "reevaluatedAt" TIMESTAMPTZ(3);

CREATE INDEX "WebhookDelivery_receivedAt_idx" ON "WebhookDelivery"("receivedAt");

CREATE TABLE "GithubApp" (
    "id" TEXT NOT NULL DEFAULT 'app',
    "appId" BIGINT NOT NULL,
    "slug" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "htmlUrl" TEXT NOT NULL,
    "ownerLogin" TEXT,
    "clientId" TEXT,
    "source" TEXT NOT NULL,
    "privateKeySealed" TEXT NOT NULL,
    "webhookSecretSealed" TEXT NOT NULL,
    "clientSecretSealed" TEXT,
    "createdById" TEXT,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "GithubApp_pkey" PRIMARY KEY ("id")
);

CREATE TABLE "GithubManifestState" (
    "state" TEXT NOT NULL,
    "userId" TEXT NOT NULL,
    "expiresAt" TIMESTAMPTZ(3) NOT NULL,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "GithubManifestState_pkey" PRIMARY KEY ("state")
);
