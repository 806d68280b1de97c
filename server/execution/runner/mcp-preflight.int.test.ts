import { existsSync } from "node:fs";
import { networkInterfaces } from "node:os";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { installedClaudeBinary } from "@/server/execution/agents/claude-code/claude-code-adapter";
import { type MessagesApiDouble, startMessagesApiDouble } from "@/server/execution/agents/testing/messages-api-double";
import { getDb } from "@/server/db";
import { zStackSpec } from "@/server/domain/stacks/spec";
import { createUser } from "@/server/testing/factories";
import { createExecRun, createLocalRepository, createPool, createStack, drain, testWorkerContext } from "@/server/queue/testing/fixtures";
import { dispatchRunTask } from "@/server/queue/tasks/dispatch-run";

// MCP health checks before launch, through the worker with the real `claude` in its sandbox and
// a Messages-API TEST DOUBLE for the model: every server is checked (an event each), an optional
// one that fails is left out of what the agent gets (the model is offered none of its tools), and
// a required one that fails refuses the launch with its reason before the CLI starts.

const hostAddress = Object.values(networkInterfaces()).flat().find((a) => a && a.family === "IPv4" && !a.internal)?.address;
const fixture = (name: string) => fileURLToPath(new URL(`../agents/claude-code/fixtures/mcp-health/${name}.mjs`, import.meta.url));
let api: MessagesApiDouble | undefined;

afterEach(async () => {
  await api?.close();
  api = undefined;
  delete process.env.AIRLOCK_SECRET_ANTHROPIC_API_KEY;
  delete process.env.AIRLOCK_CONFIG_ANTHROPIC_BASE_URL;
});

async function runWithServers(mcpServers: { name: string; target: string; required: boolean }[]) {
  api = await startMessagesApiDouble({ respond: () => ({ blocks: [{ type: "text", text: "done" }] }), host: hostAddress });
  process.env.AIRLOCK_SECRET_ANTHROPIC_API_KEY = "sk-ant-double-mcp-key";
  process.env.AIRLOCK_CONFIG_ANTHROPIC_BASE_URL = api.url;
  const user = await createUser();
  const local = await createLocalRepository({ files: { "sum.js": "export const sum = (a, b) => a + b;\n" }, members: [[user, "maintainer"]] });
  const pool = await createPool({ networkMode: "restricted", allowedHosts: [`${hostAddress}:${api.port}`] });
  await getDb().runnerPool.deleteMany({ where: { id: { not: pool.id } } });
  const spec = zStackSpec.parse({
    modelProvider: "anthropic",
    model: "claude-sonnet-4-5",
    adapter: { kind: "claude-code", baseUrlConfigMap: "anthropic-base-url", maxTurns: 2 },
    tools: ["Read"],
    mcpServers: mcpServers.map((s) => ({ ...s, transport: "stdio" })),
    promptTemplate: "Look",
    limits: { wallClockMinutes: 2, maxCostUsd: 5, maxRetries: 0 },
  });
  const stack = await createStack(spec);
  await getDb().secretGrant.create({ data: { secretName: "anthropic-api-key", stackId: stack.id, trustedPoolsOnly: false } });
  await getDb().configGrant.create({ data: { configMapName: "anthropic-base-url", stackId: stack.id } });
  const ctx = testWorkerContext({ dataDir: local.dataDir, mcpHealthTimeoutMs: 5000 });
  const r = await createExecRun({ repositoryId: local.repository.id, stack, sha: local.sha, actorUserId: user.id, prompt: "look at sum.js" });
  await dispatchRunTask({ runId: r.id }, ctx);
  await drain(ctx);
  const after = await getDb().agentDispatchRun.findUniqueOrThrow({ where: { id: r.id }, include: { attempts: true } });
  const events = await getDb().runEvent.findMany({ where: { runId: r.id }, orderBy: { seq: "asc" } });
  const health = events.filter((e) => e.type === "mcp_health").map((e) => e.payload as { server: string; ok: boolean; outcome: string; toolCount?: number; reason?: string; required: boolean });
  return { after, events, health };
}

describe.skipIf(!hostAddress || !existsSync(installedClaudeBinary()))("MCP health checks before a claude-code launch", () => {
  it("checks every server; an optional one that fails is left out of what the agent is offered", async () => {
    const { after, events, health } = await runWithServers([
      { name: "calc", target: `node ${fixture("healthy")}`, required: true },
      { name: "flaky", target: `node ${fixture("exits")}`, required: false },
    ]);
    expect(after.attempts[0]!.status, after.attempts[0]!.exitReason ?? "").toBe("succeeded");
    expect(health).toEqual([
      expect.objectContaining({ server: "calc", ok: true, toolCount: 2, outcome: "included", required: true }),
      expect.objectContaining({ server: "flaky", ok: false, outcome: "left_out", required: false }),
    ]);
    // The plan the attempt ran with says why flaky is missing; the model saw calc's tools only.
    const plan = events.find((e) => e.type === "log" && JSON.stringify(e.payload).includes("--mcp-config"));
    expect(JSON.stringify(plan?.payload)).toContain("MCP server flaky: left out, its health check failed");
    const offered = api!.requests.flatMap((r) => (r.body.tools ?? []).map((t: { name: string }) => t.name));
    expect(offered).toEqual(expect.arrayContaining(["mcp__calc__add"]));
    expect(offered.some((n: string) => n.startsWith("mcp__flaky__"))).toBe(false);
  }, 120_000);

  it("a required server that fails refuses the launch with its reason; the CLI never starts", async () => {
    const { after, health } = await runWithServers([{ name: "history", target: `node ${fixture("hangs")}`, required: true }]);
    expect(health).toEqual([expect.objectContaining({ server: "history", ok: false, outcome: "refused_launch" })]);
    expect(after.attempts[0]).toMatchObject({ status: "failed" });
    expect(after.attempts[0]!.exitReason).toMatch(/^.*required MCP server failed its health check: history \(/);
    expect(after.status).toBe("failed");
    expect(api!.requests).toHaveLength(0);
  }, 120_000);
});
