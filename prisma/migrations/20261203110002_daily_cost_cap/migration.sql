-- A repository's daily cost cap (UTC days), and each attempt's reservation against it, made at
-- claim under the repository's advisory lock so that concurrent claims cannot together pass it.
ALTER TABLE "Repository" ADD COLUMN "dailyCostCapUsd" DECIMAL(10,2);
ALTER TABLE "DispatchAttempt" ADD COLUMN "costReservedUsd" DECIMAL(12,6);
ALTER TABLE "DispatchAttempt" ADD COLUMN "costReservedAt" TIMESTAMPTZ(3);
