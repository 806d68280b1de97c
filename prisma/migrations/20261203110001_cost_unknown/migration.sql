-- The cost of an attempt (and of its run) is unknown, not $0, when a model it used has no price
-- in Airlock's table and the agent reported no dollars: the unpriced model(s), null when known.
ALTER TABLE "DispatchAttempt" ADD COLUMN "costUnknown" TEXT;
ALTER TABLE "AgentDispatchRun" ADD COLUMN "costUnknown" TEXT;
