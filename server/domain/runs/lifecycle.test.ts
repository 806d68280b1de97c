import { describe, expect, it } from "vitest";
import { AttemptStatus, RunStatus } from "@/server/db/generated/enums";
import { AppError } from "@/server/errors";
import {
  assertAttemptTransition,
  assertRunTransition,
  attemptStatuses,
  attemptTransitions,
  canApproveRun,
  canCancelAttempt,
  canCancelRun,
  canForkRun,
  canResumeRun,
  canRetryRun,
  canTransitionAttempt,
  canTransitionRun,
  cancellableRunStatuses,
  isActiveAttempt,
  isLiveRun,
  isTerminalAttempt,
  isTerminalRun,
  runStatuses,
  runTransitions,
} from "./lifecycle";

// The expected legal transitions, written out independently of the table so a
// change to the table has to be made twice (here and there) on purpose.
const legalRun = new Set([
  "suggested->queued",
  "suggested->cancelled",
  "suggested->escalated",
  "queued->running",
  "queued->cancelled",
  "queued->failed",
  "queued->escalated",
  "queued->awaiting_approval",
  "running->awaiting_approval",
  "running->succeeded",
  "running->failed",
  "running->cancelled",
  "running->queued",
  "running->escalated",
  "awaiting_approval->queued",
  "awaiting_approval->succeeded",
  "awaiting_approval->failed",
  "awaiting_approval->cancelled",
  "awaiting_approval->escalated",
  "failed->queued",
  "cancelled->queued",
  "escalated->queued",
]);

const legalAttempt = new Set([
  "queued->starting",
  "queued->cancelled",
  "queued->failed",
  "queued->lost",
  "starting->running",
  "starting->cancelled",
  "starting->failed",
  "starting->lost",
  "starting->timed_out",
  "running->succeeded",
  "running->failed",
  "running->cancelled",
  "running->timed_out",
  "running->lost",
]);

function caught(fn: () => void): unknown {
  try {
    fn();
  } catch (err) {
    return err;
  }
  return undefined;
}

describe("status lists", () => {
  it("cover every Prisma enum value exactly", () => {
    expect([...runStatuses].sort()).toEqual(Object.values(RunStatus).sort());
    expect([...attemptStatuses].sort()).toEqual(Object.values(AttemptStatus).sort());
  });

  it("give a reason for every legal transition", () => {
    for (const targets of [...Object.values(runTransitions), ...Object.values(attemptTransitions)]) {
      for (const reason of Object.values(targets)) expect(reason?.length).toBeGreaterThan(10);
    }
  });
});

describe("run transitions", () => {
  const pairs = runStatuses.flatMap((from) => runStatuses.map((to) => [from, to] as const));

  it.each(pairs.filter(([f, t]) => legalRun.has(`${f}->${t}`)))("allows %s -> %s", (from, to) => {
    expect(canTransitionRun(from, to)).toBe(true);
    expect(() => assertRunTransition(from, to)).not.toThrow();
  });

  it.each(pairs.filter(([f, t]) => !legalRun.has(`${f}->${t}`)))("refuses %s -> %s", (from, to) => {
    expect(canTransitionRun(from, to)).toBe(false);
    const err = caught(() => assertRunTransition(from, to));
    expect(err).toBeInstanceOf(AppError);
    expect(err).toMatchObject({ code: "CONFLICT", reason: "illegal_transition", status: 409 });
    expect((err as AppError).message).toContain(`from ${from} to ${to}`);
  });

  it("covers the whole product (64 pairs, 20 legal)", () => {
    expect(pairs).toHaveLength(64);
    expect(pairs.filter(([f, t]) => canTransitionRun(f, t))).toHaveLength(legalRun.size);
  });

  it("names the legal targets in the error message, or says the status is final", () => {
    expect(() => assertRunTransition("queued", "succeeded")).toThrow(
      "Cannot move run from queued to succeeded: it can only become running, cancelled, failed, escalated",
    );
    expect(() => assertRunTransition("succeeded", "queued")).toThrow("succeeded is final");
  });
});

describe("attempt transitions", () => {
  const pairs = attemptStatuses.flatMap((from) => attemptStatuses.map((to) => [from, to] as const));

  it.each(pairs.filter(([f, t]) => legalAttempt.has(`${f}->${t}`)))("allows %s -> %s", (from, to) => {
    expect(canTransitionAttempt(from, to)).toBe(true);
    expect(() => assertAttemptTransition(from, to)).not.toThrow();
  });

  it.each(pairs.filter(([f, t]) => !legalAttempt.has(`${f}->${t}`)))("refuses %s -> %s", (from, to) => {
    expect(canTransitionAttempt(from, to)).toBe(false);
    const err = caught(() => assertAttemptTransition(from, to));
    expect(err).toBeInstanceOf(AppError);
    expect(err).toMatchObject({ code: "CONFLICT", reason: "illegal_transition" });
    expect((err as AppError).details).toMatchObject({ kind: "attempt", from, to });
  });

  it("never leaves a terminal status", () => {
    for (const from of attemptStatuses.filter(isTerminalAttempt)) {
      expect(attemptStatuses.filter((to) => canTransitionAttempt(from, to))).toEqual([]);
    }
  });
});

describe("run predicates", () => {
  it("classifies terminal and live statuses", () => {
    expect(runStatuses.filter(isTerminalRun)).toEqual(["succeeded", "failed", "cancelled", "escalated"]);
    expect(runStatuses.filter(isLiveRun)).toEqual(["queued", "running"]);
  });

  it("lists the cancellable statuses as the table's edges to cancelled, nothing terminal", () => {
    expect(cancellableRunStatuses).toEqual(["suggested", "queued", "running", "awaiting_approval"]);
    expect(cancellableRunStatuses.filter(isTerminalRun)).toEqual([]);
  });

  it("allows cancel until the run is terminal, and says why not after", () => {
    expect(runStatuses.filter((s) => canCancelRun(s).ok)).toEqual([
      "suggested",
      "queued",
      "running",
      "awaiting_approval",
    ]);
    expect(canCancelRun("succeeded")).toEqual({
      ok: false,
      reason: "The run is already succeeded; there is nothing to cancel",
    });
  });

  it("allows retry only of failed, cancelled or escalated runs", () => {
    expect(runStatuses.filter((s) => canRetryRun(s).ok)).toEqual(["failed", "cancelled", "escalated"]);
    expect(canRetryRun("succeeded")).toMatchObject({ ok: false, reason: expect.stringContaining("resume or fork") });
    expect(canRetryRun("running")).toMatchObject({ ok: false, reason: expect.stringContaining("is running") });
    expect(canRetryRun("awaiting_approval")).toMatchObject({ reason: expect.stringContaining("awaiting approval") });
  });

  it("refuses retry once the stack's retry budget is spent", () => {
    expect(canRetryRun("failed", { attempts: 3, maxRetries: 2 })).toMatchObject({
      ok: false,
      reason: expect.stringContaining("All 3 attempts are used"),
    });
    expect(canRetryRun("failed", { attempts: 2, maxRetries: 2 })).toEqual({ ok: true });
  });

  it("allows resume of finished runs only", () => {
    expect(runStatuses.filter((s) => canResumeRun(s).ok)).toEqual(["succeeded", "failed", "cancelled", "escalated"]);
    expect(canResumeRun("running")).toMatchObject({ reason: expect.stringContaining("once it has finished") });
    expect(canResumeRun("suggested")).toMatchObject({ reason: expect.stringContaining("dispatch it instead") });
  });

  it("allows fork of anything that ran or is running", () => {
    expect(runStatuses.filter((s) => !canForkRun(s).ok)).toEqual(["suggested"]);
  });

  it("allows approval only while awaiting approval", () => {
    expect(runStatuses.filter((s) => canApproveRun(s).ok)).toEqual(["awaiting_approval"]);
    expect(canApproveRun("queued")).toMatchObject({ ok: false, reason: expect.stringContaining("queued") });
  });

  it("gives a reason whenever it refuses", () => {
    for (const s of runStatuses) {
      for (const v of [canCancelRun(s), canRetryRun(s), canResumeRun(s), canForkRun(s), canApproveRun(s)]) {
        if (!v.ok) expect(v.reason.length).toBeGreaterThan(10);
      }
    }
  });
});

describe("attempt predicates", () => {
  it("classifies terminal and active attempts", () => {
    expect(attemptStatuses.filter(isTerminalAttempt)).toEqual(["succeeded", "failed", "cancelled", "timed_out", "lost"]);
    expect(attemptStatuses.filter(isActiveAttempt)).toEqual(["starting", "running"]);
  });

  it("allows cancelling attempts that have not finished", () => {
    expect(attemptStatuses.filter((s) => canCancelAttempt(s).ok)).toEqual(["queued", "starting", "running"]);
    expect(canCancelAttempt("timed_out")).toEqual({ ok: false, reason: "The attempt is already timed out" });
  });
});
