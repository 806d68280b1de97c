-- The trace a delivery and a run belong to, so jobs added without a traceparent in their payload
-- (the webhook's own insert, a decision in the web process) continue it.
ALTER TABLE "AgentDispatchRun" ADD COLUMN "traceParent" TEXT;
ALTER TABLE "WebhookDelivery" ADD COLUMN "traceParent" TEXT;
