// Airlock's cost meter through the worker for an agent that is not Claude Code: a command agent
// reports Airlock cost events (tokens and its model, no dollars); the runner prices them with the
// price table, stops the real process at the stack's cap and fails the attempt with the figures,
// and says "unknown" (never $0) for a model without a price.
import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { runsAnywhere } from "@/server/execution/agents/testing/processes";
import { getDb } from "@/server/db";
import { createUser } from "@/server/testing/factories";
import { createExecRun, createLocalRepository, createPool, createStack, drain, scriptedSpec, testWorkerContext } from "@/server/queue/testing/fixtures";
import { dispatchRunTask } from "@/server/queue/tasks/dispatch-run";

const db = getDb();

async function runAgent(script: string, limits: { maxCostUsd: number; maxRetries: number }) {
  const user = await createUser();
  const local = await createLocalRepository({ files: { "README.md": "x\n", "agent.cjs": script }, members: [[user, "maintainer"]] });
  const pool = await createPool();
  await db.runnerPool.deleteMany({ where: { id: { not: pool.id } } });
  const spec = scriptedSpec({ adapter: { kind: "command", command: ["node", "agent.cjs"], env: [], outputFormat: "airlock" }, limits: { wallClockMinutes: 5, ...limits } });
  const stack = await createStack(spec);
  const ctx = testWorkerContext({ dataDir: local.dataDir });
  const run = await createExecRun({ repositoryId: local.repository.id, stack, sha: local.sha, actorUserId: user.id });
  const started = Date.now();
  await dispatchRunTask({ runId: run.id }, ctx);
  await drain(ctx);
  const after = await db.agentDispatchRun.findUniqueOrThrow({ where: { id: run.id }, include: { attempts: true } });
  const events = await db.runEvent.findMany({ where: { runId: run.id }, orderBy: { seq: "asc" } });
  return { run: after, events, ms: Date.now() - started };
}

const agent = (model: string, marker: string) => String.raw`
const ev = (e) => process.stdout.write(JSON.stringify(e) + "\n");
ev({ type: "message", payload: { role: "assistant", text: "working" } });
// A child that would outlive a careless stop.
require("node:child_process").spawn(process.execPath, ["-e", "setTimeout(() => {}, 300000)", "${marker}"], { stdio: "ignore" });
// Cumulative totals: $0.30, then (once the child runs) $0.60 on Sonnet 4.5 ($3 per million input tokens).
ev({ type: "cost", payload: { inputTokens: 100000, outputTokens: 0, model: "${model}" } });
setTimeout(() => ev({ type: "cost", payload: { inputTokens: 200000, outputTokens: 0, model: "${model}" } }), 1500);
setTimeout(() => ev({ type: "message", payload: { role: "assistant", text: "still spending" } }), 120000);
`;

describe("Airlock's cost meter for a command agent", () => {
  it("prices the agent's token counts and stops it at the cap with the figures; not retried", async () => {
    const marker = `airlock-meter-${randomUUID()}`;
    let childSeen = false;
    const watch = setInterval(() => (childSeen ||= runsAnywhere(marker)), 100);
    const { run, events, ms } = await runAgent(agent("claude-sonnet-4-5", marker), { maxCostUsd: 0.5, maxRetries: 2 }).finally(() => clearInterval(watch));
    // The agent's child ran, and the stop ended it with the agent (the whole process tree).
    expect(childSeen).toBe(true);
    expect(runsAnywhere(marker)).toBe(false);
    expect(run.attempts).toHaveLength(1);
    const attempt = run.attempts[0]!;
    expect(attempt.status).toBe("failed");
    expect(attempt.exitReason).toBe("Cost cap reached: stopped at $0.6000 of the $0.5000 cap (Airlock's meter stopped the session, estimated from Airlock's price table)");
    expect(Number(attempt.costUsd)).toBeCloseTo(0.6, 6);
    expect(Number(run.costUsd)).toBeCloseTo(0.6, 6);
    expect(run.status).toBe("failed");
    expect(ms).toBeLessThan(60_000);
    const costs = events.filter((e) => e.type === "cost").map((e) => e.payload as { usd?: number; usdBasis?: string });
    expect(costs.map((c) => c.usd)).toEqual([expect.closeTo(0.3, 6), expect.closeTo(0.6, 6)]);
    expect(costs.every((c) => c.usdBasis === "price_table")).toBe(true);
    const texts = events.map((e) => (e.payload as { text?: string }).text ?? "");
    expect(texts.some((t) => t.includes("still spending"))).toBe(false);
    const status = events.filter((e) => e.type === "status").map((e) => (e.payload as { reason?: string }).reason ?? "");
    expect(status.some((r) => r.includes("Cost cap reached: stopped at $0.6000 of the $0.5000 cap") && r.includes("not retried"))).toBe(true);
  }, 90_000);

  it("a model without a price: the cost is unknown on the attempt and the run, said so, and the cap cannot be metered", async () => {
    const script = String.raw`
const ev = (e) => process.stdout.write(JSON.stringify(e) + "\n");
ev({ type: "cost", payload: { inputTokens: 5000000, outputTokens: 10, model: "my-gateway-model" } });
`;
    const { run, events } = await runAgent(script, { maxCostUsd: 0.5, maxRetries: 0 });
    const attempt = run.attempts[0]!;
    expect(attempt.status).toBe("succeeded");
    expect(attempt.costUnknown).toBe("my-gateway-model");
    expect(run.costUnknown).toBe("my-gateway-model");
    expect(attempt.inputTokens).toBe(5_000_000);
    const texts = events.map((e) => (e.payload as { text?: string }).text ?? "");
    expect(texts).toContain("Cost unknown: Airlock has no price for my-gateway-model, so its meter cannot hold this attempt to the $0.5000 cap.");
    const cost = events.find((e) => e.type === "cost")!.payload as { usd?: number; unpricedModel?: string };
    expect(cost.usd).toBeUndefined();
    expect(cost.unpricedModel).toBe("my-gateway-model");
  }, 90_000);
});
