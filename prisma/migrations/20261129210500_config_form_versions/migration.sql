-- Optimistic concurrency for the settings forms: service accounts and grants get a version
-- (bumped by every save) and an update time, like RunnerPool already has.

-- AlterTable
ALTER TABLE "ServiceAccount" ADD COLUMN     "version" INTEGER NOT NULL DEFAULT 1,
ADD COLUMN     "updatedAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP;

-- AlterTable
ALTER TABLE "SecretGrant" ADD COLUMN     "version" INTEGER NOT NULL DEFAULT 1,
ADD COLUMN     "updatedAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP;

-- AlterTable
ALTER TABLE "ConfigGrant" ADD COLUMN     "version" INTEGER NOT NULL DEFAULT 1,
ADD COLUMN     "updatedAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP;
