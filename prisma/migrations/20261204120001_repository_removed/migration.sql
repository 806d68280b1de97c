-- A removed repository keeps its row (history names it); see repositories/edit-service.ts.
ALTER TABLE "Repository" ADD COLUMN "removedAt" TIMESTAMPTZ(3);
