-- Flaky-scan rules get a schedule, a window and a threshold; each scan is recorded.
ALTER TABLE "TriggerRule" ADD COLUMN "scanSchedule" TEXT;
ALTER TABLE "TriggerRule" ADD COLUMN "scanWindowHours" INTEGER;
ALTER TABLE "TriggerRule" ADD COLUMN "scanThreshold" INTEGER;

CREATE TABLE "FlakyScan" (
    "id" TEXT NOT NULL,
    "ruleId" TEXT NOT NULL,
    "at" TIMESTAMPTZ(3) NOT NULL,
    "windowFrom" TIMESTAMPTZ(3) NOT NULL,
    "queryDigest" TEXT NOT NULL,
    "groups" JSONB NOT NULL,
    "requestedBy" TEXT NOT NULL,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "FlakyScan_pkey" PRIMARY KEY ("id")
);
CREATE UNIQUE INDEX "FlakyScan_ruleId_at_key" ON "FlakyScan"("ruleId", "at");
CREATE INDEX "FlakyScan_ruleId_createdAt_idx" ON "FlakyScan"("ruleId", "createdAt");
ALTER TABLE "FlakyScan" ADD CONSTRAINT "FlakyScan_ruleId_fkey" FOREIGN KEY ("ruleId") REFERENCES "TriggerRule"("id") ON DELETE CASCADE ON UPDATE CASCADE;
