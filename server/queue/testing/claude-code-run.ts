import { networkInterfaces } from "node:os";
import type { z } from "zod";
import { getDb } from "@/server/db";
import { zStackSpec } from "@/server/domain/stacks/spec";
import { type DoubleTurn, type MessagesApiDouble, type RecordedRequest, startMessagesApiDouble } from "@/server/execution/agents/testing/messages-api-double";
import { dispatchRunTask } from "@/server/queue/tasks/dispatch-run";
import type { WorkerSettings } from "@/server/queue/worker-context";
import { createUser } from "@/server/testing/factories";
import { createExecRun, createLocalRepository, createPool, createStack, drain, testWorkerContext } from "./fixtures";

// A run of a claude-code stack through the worker, for the tests: admission grants the API key
// and base URL, the real `claude` runs in the pool's bubblewrap sandbox and reaches the
// Messages-API TEST DOUBLE through the egress proxy (the pool lists only the double's address).
// Call closeClaudeCodeRun() after each test.

/** This machine's first non-loopback IPv4 address: the sandbox cannot reach loopback. */
export const testHostAddress = Object.values(networkInterfaces()).flat().find((a) => a && a.family === "IPv4" && !a.internal)?.address;

let api: MessagesApiDouble | undefined;

export async function closeClaudeCodeRun() {
  await api?.close();
  api = undefined;
  delete process.env.AIRLOCK_SECRET_ANTHROPIC_API_KEY;
  delete process.env.AIRLOCK_CONFIG_ANTHROPIC_BASE_URL;
}

export async function runClaudeCodeStack(opts: {
  respond: (req: RecordedRequest) => DoubleTurn;
  files: Record<string, string>;
  prompt: string;
  /** Over the default stack, as a stack form would send it (defaults filled by the schema). */
  spec?: Partial<z.input<typeof zStackSpec>>;
  settings?: Partial<WorkerSettings>;
  apiKey?: string;
}) {
  api = await startMessagesApiDouble({ respond: opts.respond, host: testHostAddress });
  process.env.AIRLOCK_SECRET_ANTHROPIC_API_KEY = opts.apiKey ?? "sk-ant-double-run-key";
  process.env.AIRLOCK_CONFIG_ANTHROPIC_BASE_URL = api.url;
  const user = await createUser();
  const local = await createLocalRepository({ files: opts.files, members: [[user, "maintainer"]] });
  const pool = await createPool({ networkMode: "restricted", allowedHosts: [`${testHostAddress}:${api.port}`] });
  await getDb().runnerPool.deleteMany({ where: { id: { not: pool.id } } });
  const spec = zStackSpec.parse({
    modelProvider: "anthropic",
    model: "claude-sonnet-4-5",
    adapter: { kind: "claude-code", baseUrlConfigMap: "anthropic-base-url", maxTurns: 6 },
    tools: ["Read", "Edit"],
    promptTemplate: "Fix it",
    limits: { wallClockMinutes: 2, maxCostUsd: 5, maxRetries: 0 },
    ...opts.spec,
  });
  const stack = await createStack(spec);
  await getDb().secretGrant.create({ data: { secretName: "anthropic-api-key", stackId: stack.id, trustedPoolsOnly: false } });
  await getDb().configGrant.create({ data: { configMapName: "anthropic-base-url", stackId: stack.id } });
  const ctx = testWorkerContext({ dataDir: local.dataDir, ...opts.settings });
  const r = await createExecRun({ repositoryId: local.repository.id, stack, sha: local.sha, actorUserId: user.id, prompt: opts.prompt });
  await dispatchRunTask({ runId: r.id }, ctx);
  await drain(ctx);
  const { after, events } = await runResult(r.id);
  /** Runs another run of the same repository and worker (a continuation) and returns what it stored. */
  const dispatchAlso = async (runId: string) => {
    await dispatchRunTask({ runId }, ctx);
    await drain(ctx);
    return runResult(runId);
  };
  return { after, events, requests: api.requests, user, ctx, dispatchAlso };
}

async function runResult(runId: string) {
  const after = await getDb().agentDispatchRun.findUniqueOrThrow({ where: { id: runId }, include: { attempts: true } });
  const events = await getDb().runEvent.findMany({ where: { runId }, orderBy: { seq: "asc" } });
  return { after, events };
}
