// The RunEvent types the page listens for on the SSE stream (EventSource needs
// a listener per `event:` name). Kept equal to the server catalogue by a test
// (server/streaming/event-types.test.ts), so a new type is not missed live.
export const transcriptEventTypes = [
  "message",
  "tool_call",
  "tool_result",
  "thinking",
  "permission_denied",
  "subagent_started",
  "subagent_completed",
  "artifact_produced",
  "heartbeat",
  "cost",
  "model_call",
  "log",
  "approval_requested",
  "write_back_requested",
  "write_back_completed",
  "status",
  "queue",
  "trigger_matched",
  "dispatch_skipped",
  "context_assembled",
  "admission",
  "context_attached",
  "sandbox",
  "mcp_health",
] as const;

/** Events after which the run's header and panes are out of date. */
export const runChangingTypes: ReadonlySet<string> = new Set([
  "status",
  "artifact_produced",
  "approval_requested",
  "write_back_completed",
  "cost",
  "admission",
  // A blocked connection or a limit: the sandbox section of the right pane.
  "sandbox",
]);
