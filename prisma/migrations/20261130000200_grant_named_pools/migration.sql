-- Grants scoped to named runner pools (issue 8). Existing grants keep their trust-tier scope:
-- the backfill states it explicitly so a later default change never reinterprets old rows.

-- CreateEnum
CREATE TYPE "GrantPoolScope" AS ENUM ('trust_tier', 'named_pools');

-- AlterTable
ALTER TABLE "SecretGrant" ADD COLUMN     "poolIds" TEXT[] DEFAULT ARRAY[]::TEXT[],
ADD COLUMN     "poolScope" "GrantPoolScope" NOT NULL DEFAULT 'trust_tier';

-- AlterTable
ALTER TABLE "ConfigGrant" ADD COLUMN     "poolIds" TEXT[] DEFAULT ARRAY[]::TEXT[],
ADD COLUMN     "poolScope" "GrantPoolScope" NOT NULL DEFAULT 'trust_tier';

-- Backfill
UPDATE "SecretGrant" SET "poolScope" = 'trust_tier', "poolIds" = ARRAY[]::TEXT[];
UPDATE "ConfigGrant" SET "poolScope" = 'trust_tier', "poolIds" = ARRAY[]::TEXT[];
