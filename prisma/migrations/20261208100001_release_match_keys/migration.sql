-- Release rules match on the spec's release keys (triggers/release-keys.ts): a version glob, the
-- chart, npm package and image the release ships, its checksum file, and the branch its tag's
-- commit is on. A readiness gap Airlock finds in a matched release (a missing artifact, a checksum
-- that does not match, a version out of line) is its own approval item: action release_gap.

-- AlterEnum
ALTER TYPE "WriteBackKind" ADD VALUE 'release_gap';

-- AlterTable
ALTER TABLE "TriggerRule" ADD COLUMN "releaseVersion" TEXT,
ADD COLUMN "releaseChart" TEXT,
ADD COLUMN "releaseNpmPackage" TEXT,
ADD COLUMN "releaseImage" TEXT,
ADD COLUMN "releaseChecksum" TEXT,
ADD COLUMN "releaseBranch" TEXT;
