-- Who disabled a repository (issue 18, item 2): "admin" stays disabled whatever an installation
-- event says; "installation" (and older rows, disabled only by installation events) follows them.
ALTER TABLE "Repository" ADD COLUMN "disabledBy" TEXT;
UPDATE "Repository" SET "disabledBy" = 'installation' WHERE "disabledAt" IS NOT NULL;

-- A re-evaluated delivery reads its earlier drops, so it writes none twice.
CREATE INDEX "TriggerDrop_deliveryId_idx" ON "TriggerDrop"("deliveryId");
