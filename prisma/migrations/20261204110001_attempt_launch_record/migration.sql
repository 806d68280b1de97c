-- What the agent ran with, stored when its session starts: command line, generated files,
-- model, tools, MCP servers, secrets by name only (never a value).
ALTER TABLE "DispatchAttempt" ADD COLUMN "launchRecord" JSONB;
