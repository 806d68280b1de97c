-- Every attempt on a pool runs in a sandbox with the pool's network mode and limits (issue 15).
CREATE TYPE "NetworkMode" AS ENUM ('none', 'restricted', 'open');

ALTER TABLE "RunnerPool" ADD COLUMN "networkMode" "NetworkMode" NOT NULL DEFAULT 'restricted',
ADD COLUMN "allowedHosts" TEXT[] DEFAULT ARRAY[]::TEXT[],
ADD COLUMN "memoryLimitMb" INTEGER NOT NULL DEFAULT 4096,
ADD COLUMN "processLimit" INTEGER NOT NULL DEFAULT 512,
ADD COLUMN "cpuLimitSeconds" INTEGER NOT NULL DEFAULT 3600,
ADD COLUMN "diskLimitMb" INTEGER NOT NULL DEFAULT 10240,
ADD COLUMN "allowUnsandboxed" BOOLEAN NOT NULL DEFAULT false;
