-- The agent's own session id (Claude Code's session_id), for reading its transcript and resuming it.
ALTER TABLE "DispatchAttempt" ADD COLUMN "agentSessionId" TEXT;
