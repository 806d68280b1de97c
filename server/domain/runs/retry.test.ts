import { describe, expect, it } from "vitest";
import type { RunStatus } from "@/server/db/generated/enums";
import { automaticRetry, type AttemptEndCause } from "./lifecycle";

// The automatic retry rule as a table: cause x run status x attempts used x bound -> verdict.

const table: [AttemptEndCause, RunStatus, number, number, boolean, RegExp][] = [
  // Retried within the bound: lost, timed out, transient start failure.
  ["lost", "running", 1, 2, true, /^retry 1 of 2$/],
  ["lost", "queued", 2, 2, true, /^retry 2 of 2$/],
  ["lost", "running", 3, 2, false, /no retry is left \(2 allowed/],
  ["timed_out", "running", 1, 1, true, /^retry 1 of 1$/],
  ["timed_out", "running", 2, 1, false, /no retry is left/],
  ["timed_out", "running", 1, 0, false, /allows no retries/],
  ["start_failed_transient", "queued", 1, 3, true, /^retry 1 of 3$/],
  ["start_failed_transient", "queued", 4, 3, false, /no retry is left/],
  // Only a run still in flight is retried.
  ["lost", "cancelled", 1, 2, false, /the run is cancelled/],
  ["timed_out", "failed", 1, 2, false, /the run is failed/],
  ["start_failed_transient", "awaiting_approval", 1, 2, false, /the run is awaiting_approval/],
  // Deterministic ends are never retried, however many retries are left.
  ["agent_failed", "running", 1, 5, false, /agent itself failed/],
  ["start_failed", "queued", 1, 5, false, /would not change/],
  ["admission_refused", "queued", 1, 5, false, /admission refused/],
  ["cancelled", "running", 1, 5, false, /cancelled/],
];

describe("automaticRetry", () => {
  it.each(table)("%s, run %s, attempt %i of bound %i -> retry %s", (cause, runStatus, attempts, maxRetries, retry, reason) => {
    const verdict = automaticRetry({ cause, runStatus, attempts, maxRetries });
    expect(verdict.retry).toBe(retry);
    expect(verdict.reason).toMatch(reason);
  });

  it("never retries past the bound, for any cause and bound", () => {
    const causes: AttemptEndCause[] = ["lost", "timed_out", "start_failed_transient", "start_failed", "agent_failed", "admission_refused", "cancelled"];
    for (const cause of causes) {
      for (let maxRetries = 0; maxRetries <= 4; maxRetries++) {
        const retried = [1, 2, 3, 4, 5, 6].filter((attempts) => automaticRetry({ cause, runStatus: "running", attempts, maxRetries }).retry);
        // At most maxRetries retries in all, and only for the retriable causes.
        expect(retried.length).toBe(["lost", "timed_out", "start_failed_transient"].includes(cause) ? maxRetries : 0);
      }
    }
  });
});
