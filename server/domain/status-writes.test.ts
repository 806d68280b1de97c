import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { statusWritesIn, statusWritesOutsideTransitions } from "./status-writes";

const root = fileURLToPath(new URL("../../", import.meta.url));

describe("one write path per lifecycle", () => {
  it("no file outside runs/transition.ts and approvals/transition.ts writes a run, attempt or approval status", () => {
    expect(statusWritesOutsideTransitions(root).map((w) => `${w.file}:${w.line} ${w.what}`)).toEqual([]);
  });

  it("finds the direct writes it is meant to refuse", () => {
    const source = [
      `await tx.agentDispatchRun.update({ where: { id }, data: { status: "failed", finishedAt: now } });`,
      `await tx.dispatchAttempt.updateMany({`,
      `  where: { id, status: "queued" },`,
      `  data: { finishedAt: now, status: "cancelled" satisfies AttemptStatus },`,
      `});`,
      `await tx.approvalRequest.update({ where: { id }, data: { status: result ? "executed" : "failed" } });`,
      "await tx.$executeRaw`UPDATE \"DispatchAttempt\" SET \"runnerRef\" = ${ref}, \"status\" = 'starting' WHERE \"id\" = ${id}`;",
    ].join("\n");
    expect(statusWritesIn("x.ts", source).map((w) => `${w.line} ${w.what}`)).toEqual([
      "1 agentDispatchRun.update",
      "2 dispatchAttempt.updateMany",
      "6 approvalRequest.update",
      `7 UPDATE "DispatchAttempt"`,
    ]);
  });

  it("leaves alone reads filtered by status and writes of other fields", () => {
    const source = [
      `await tx.dispatchAttempt.updateMany({ where: { runId, status: "running" }, data: { heartbeatAt: now } });`,
      `await tx.approvalRequest.update({ where: { id }, data: { pushProtectionOverride: override } });`,
      `await db.agentDispatchRun.findMany({ where: { status: "queued" } });`,
      "await tx.$executeRaw`UPDATE \"AgentDispatchRun\" SET \"lastEventSeq\" = 1 WHERE \"status\" = 'running'`;",
    ].join("\n");
    expect(statusWritesIn("x.ts", source)).toEqual([]);
  });
});
