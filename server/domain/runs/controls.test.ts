import { describe, expect, it } from "vitest";
import { notAvailableYet, runControls } from "./controls";

describe("runControls", () => {
  it("enables cancel for a maintainer on a running run", () => {
    const c = runControls({ status: "running", role: "maintainer", attempts: 1, pendingApprovals: 0 });
    expect(c.cancel).toEqual({ enabled: true, reason: null, detail: null });
  });

  it("says why cancel is disabled: the state, or the role", () => {
    expect(runControls({ status: "succeeded", role: "admin", attempts: 1, pendingApprovals: 0 }).cancel).toMatchObject({
      enabled: false,
      reason: "The run is already succeeded; there is nothing to cancel",
    });
    expect(runControls({ status: "running", role: "viewer", attempts: 1, pendingApprovals: 0 }).cancel).toMatchObject({
      enabled: false,
      reason: "This needs the maintainer role on the repository; you are viewer",
    });
  });

  it("keeps controls without a mutation disabled as 'Not available yet', with the state reason as detail", () => {
    const c = runControls({ status: "failed", role: "maintainer", attempts: 1, maxRetries: 2, pendingApprovals: 0 });
    for (const name of ["retry", "resume", "fork", "continue", "attachContext", "dispatch"] as const) {
      expect(c[name].enabled, name).toBe(false);
      expect(c[name].reason, name).toBe(notAvailableYet);
    }
    expect(c.retry.detail).toBeNull();
    // approve/reject have their mutations (approvals router): the lifecycle's reason shows.
    expect(c.approve).toMatchObject({ enabled: false, reason: expect.stringMatching(/only a run awaiting approval/) });
  });

  it("turns a control on once its mutation exists, still under the lifecycle's verdict", () => {
    const implemented = new Set(["cancel", "retry", "approve"] as const);
    const failed = runControls({ status: "failed", role: "maintainer", attempts: 3, maxRetries: 2, pendingApprovals: 0, implemented });
    expect(failed.retry).toMatchObject({ enabled: false, reason: expect.stringMatching(/All 3 attempts are used/) });
    const waiting = runControls({ status: "awaiting_approval", role: "maintainer", attempts: 1, pendingApprovals: 0, implemented });
    expect(waiting.approve).toMatchObject({ enabled: false, reason: "No approval is pending" });
    expect(runControls({ status: "awaiting_approval", role: "maintainer", attempts: 1, pendingApprovals: 1, implemented }).approve.enabled).toBe(true);
  });
});
