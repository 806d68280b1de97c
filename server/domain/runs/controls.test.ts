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
    const c = runControls({ status: "succeeded", role: "maintainer", attempts: 1, pendingApprovals: 0, implemented: new Set(["cancel"]) });
    expect(c.attachContext).toEqual({
      enabled: false,
      reason: notAvailableYet,
      detail: "The run is succeeded; context is attached to a running run or one awaiting approval",
    });
    const only = runControls({ status: "failed", role: "maintainer", attempts: 1, maxRetries: 2, pendingApprovals: 0, implemented: new Set(["cancel"]) });
    for (const name of ["retry", "resume", "fork", "approve", "reject", "continue", "dispatch", "attachContext"] as const) {
      expect(only[name].enabled, name).toBe(false);
      expect(only[name].reason, name).toBe(notAvailableYet);
    }
    expect(only.retry.detail).toBeNull();
    expect(only.approve.detail).toMatch(/only a run awaiting approval/);
  });

  it("enables the execution controls the lifecycle allows: retry/resume/fork/continue on a failed run, dispatch on a suggestion", () => {
    const failed = runControls({ status: "failed", role: "maintainer", attempts: 1, maxRetries: 2, pendingApprovals: 0 });
    for (const name of ["retry", "resume", "fork", "continue"] as const) expect(failed[name].enabled, name).toBe(true);
    expect(failed.dispatch).toMatchObject({ enabled: false, reason: "Only a suggestion can be dispatched" });
    const suggested = runControls({ status: "suggested", role: "maintainer", attempts: 0, pendingApprovals: 0 });
    expect(suggested.dispatch.enabled).toBe(true);
    expect(suggested.retry.reason).toMatch(/dispatch it instead/);
    expect(runControls({ status: "suggested", role: "viewer", attempts: 0, pendingApprovals: 0 }).dispatch.reason).toMatch(/maintainer role/);
  });

  it("turns a control on once its mutation exists, still under the lifecycle's verdict", () => {
    const implemented = new Set(["cancel", "retry", "approve"] as const);
    const failed = runControls({ status: "failed", role: "maintainer", attempts: 3, maxRetries: 2, pendingApprovals: 0, implemented });
    expect(failed.retry).toMatchObject({ enabled: false, reason: expect.stringMatching(/All 3 attempts are used/) });
    const waiting = runControls({ status: "awaiting_approval", role: "maintainer", attempts: 1, pendingApprovals: 0, implemented });
    expect(waiting.approve).toMatchObject({ enabled: false, reason: "No approval is pending" });
    expect(runControls({ status: "awaiting_approval", role: "maintainer", attempts: 1, pendingApprovals: 1, implemented }).approve.enabled).toBe(true);
  });

  it("enables attach context for a maintainer on a running run or one awaiting approval, and says why not otherwise", () => {
    for (const status of ["running", "awaiting_approval"] as const) {
      expect(runControls({ status, role: "maintainer", attempts: 1, pendingApprovals: 0 }).attachContext, status).toEqual({ enabled: true, reason: null, detail: null });
    }
    expect(runControls({ status: "queued", role: "maintainer", attempts: 1, pendingApprovals: 0 }).attachContext).toMatchObject({
      enabled: false,
      reason: "The run is queued; context is attached to a running run or one awaiting approval",
    });
    expect(runControls({ status: "running", role: "viewer", attempts: 1, pendingApprovals: 0 }).attachContext).toMatchObject({
      enabled: false,
      reason: "This needs the maintainer role on the repository; you are viewer",
    });
  });
});
