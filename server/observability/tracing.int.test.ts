import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { JobHelpers } from "graphile-worker";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getDb, transaction } from "@/server/db";
import { appendRunEvents } from "@/server/domain/events/append";
import { recordAudit } from "@/server/domain/audit";
import { enqueue } from "@/server/queue/enqueue";
import { createRepository, createRun } from "@/server/testing/factories";
import { tracedTask } from "./jobs";
import { startTracing } from "./tracing";
import { observeWebhook } from "./webhook";

// A real OTLP/HTTP receiver in the test process: the exporter POSTs JSON to /v1/traces.
type OtlpSpan = { traceId: string; spanId: string; parentSpanId?: string; name: string; attributes: { key: string; value: Record<string, unknown> }[] };
type OtlpBody = { resourceSpans: { scopeSpans: { spans: OtlpSpan[] }[] }[] };

let receiver: Server;
const received: OtlpSpan[] = [];
let tracing: ReturnType<typeof startTracing>;

beforeAll(async () => {
  receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      if (req.url === "/v1/traces" && req.headers["content-type"]?.includes("json")) {
        const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as OtlpBody;
        for (const rs of body.resourceSpans) for (const ss of rs.scopeSpans) received.push(...ss.spans);
      }
      res.writeHead(200, { "Content-Type": "application/json" }).end("{}");
    });
  });
  await new Promise<void>((r) => receiver.listen(0, "127.0.0.1", () => r()));
  tracing = startTracing("airlock-test", `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`);
});

afterAll(async () => {
  await tracing?.shutdown();
  receiver.close();
});

const helpers = (id: string) => ({ job: { id, attempts: 1 } }) as unknown as JobHelpers;

describe("traces", () => {
  it("one trace from the webhook delivery through evaluation, dispatch, the agent session, its model calls and its tool call, to approval and write-back", async () => {
    const db = getDb();
    const repo = await createRepository();
    const deliveryId = `delivery-${Date.now()}`;
    let runId = "";

    // 1. The webhook request: records the delivery (as the ingest statement does) and answers.
    const request = new Request("http://localhost/api/webhooks/github", { method: "POST", headers: { "x-github-delivery": deliveryId, "x-github-event": "check_run" } });
    const sql = { query: (text: string, values: readonly unknown[]) => db.$executeRawUnsafe(text, ...values) };
    await observeWebhook({ request, source: "github", sql }, async () => {
      await db.webhookDelivery.create({ data: { deliveryId, source: "github", event: "check_run", payload: {} } });
      return new Response(null, { status: 202 });
    });

    // 2. Evaluation (a job the ingest statement added, with no traceparent in its payload).
    await tracedTask(db, "delivery.evaluate", async () => {
      const run = await createRun({ repositoryId: repo.id, status: "queued" });
      runId = run.id;
      await transaction(db, "commit candidate", async (tx) => {
        await appendRunEvents({
          db: tx,
          runId,
          events: [
            { type: "trigger_matched", payload: { ruleId: "r1", ruleName: "failed checks", triggerKind: "failed_check", dedupeKey: "k", deliveryId } },
            { type: "status", payload: { scope: "run", from: null, to: "queued", reason: "auto-run" } },
          ],
        });
        await enqueue(tx, "run.dispatch", { runId });
      });
    })({ deliveryId }, helpers("1"));

    // 3. Dispatch: the job's payload carries the traceparent enqueue() added.
    const [job] = await db.$queryRaw<{ payload: { runId: string; traceParent?: string } }[]>`
      SELECT j.payload FROM graphile_worker._private_jobs j JOIN graphile_worker._private_tasks t ON t.id = j.task_id
      WHERE t.identifier = 'run.dispatch' AND j.payload->>'runId' = ${runId}`;
    expect(job?.payload.traceParent).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);
    await tracedTask(db, "run.dispatch", async () => {
      const t0 = Date.now();
      const startedAt = new Date(t0 + 1200).toISOString();
      await appendRunEvents({ db, runId, events: [{ type: "status", payload: { scope: "attempt", attemptNumber: 1, from: "starting", to: "running", reason: "session started" } }] });
      // Two model calls (the second answers the tool's result), as the Claude Code parser reports them.
      const call = (messageId: string, startMs: number, durationMs: number, inputTokens: number, outputTokens: number) => ({
        type: "model_call" as const,
        payload: { messageId, model: "claude-sonnet-4-5", inputTokens, outputTokens, cacheReadTokens: 1000, cacheWriteTokens: 50, startedAt: new Date(startMs).toISOString(), durationMs },
      });
      await appendRunEvents({
        db,
        runId,
        events: [
          { type: "tool_call", payload: { id: "call-1", name: "Bash", input: { command: "npm test" }, startedAt } },
          call("msg-1", t0, 1200, 700, 100),
          { type: "tool_result", payload: { toolCallId: "call-1", output: "1 failed", isError: false, durationMs: 5 } },
          call("msg-2", t0 + 1300, 800, 500, 200),
          { type: "cost", payload: { inputTokens: 1200, outputTokens: 300, model: "claude-sonnet-4-5" } },
          { type: "status", payload: { scope: "attempt", attemptNumber: 1, from: "running", to: "succeeded", reason: "exit 0" } },
        ],
      });
    })(job!.payload, helpers("2"));

    // 4. A person decides in the web process (no active span), 5. the write-back job runs.
    const approval = await db.approvalRequest.create({
      data: { runId, action: "comment", presented: {}, status: "approved", expiresAt: new Date(Date.now() + 3600_000), createdAt: new Date(Date.now() - 60_000), decidedAt: new Date() },
    });
    await recordAudit(db, { actor: { userId: null, label: "maintainer" }, action: "approval.approve", objectType: "ApprovalRequest", objectId: approval.id });
    await tracedTask(db, "writeback.execute", async () => {
      await appendRunEvents({ db, runId, events: [{ type: "write_back_completed", payload: { writeBackId: "wb-1", approvalId: approval.id, action: "comment", outcome: "succeeded" } }] });
    })({ approvalId: approval.id }, helpers("3"));

    await new Promise((r) => setTimeout(r, 300)); // the approval span is recorded after its lookup
    await tracing!.flush();

    const byName = (name: string) => {
      const s = received.find((x) => x.name === name);
      expect(s, `span ${name}; got ${received.map((x) => x.name).join(", ")}`).toBeDefined();
      return s!;
    };
    const webhook = byName("webhook github");
    const evaluate = byName("delivery.evaluate");
    const dispatch = byName("run.dispatch");
    const session = byName("invoke_agent");
    const tool = byName("execute_tool Bash");
    const approvalSpan = byName("approval approved");
    const writeBack = byName("writeback.execute");
    const trace = webhook.traceId;
    for (const s of [evaluate, dispatch, session, tool, approvalSpan, writeBack]) expect(s.traceId, s.name).toBe(trace);
    expect(webhook.parentSpanId ?? "").toBe("");
    // Parent links, followed up the tree (a job added inside a transaction is the child of that
    // transaction's Prisma span, itself under the job that opened it).
    const byId = new Map(received.map((s) => [s.spanId, s]));
    const ancestors = (s: OtlpSpan) => {
      const out: string[] = [];
      for (let p = s.parentSpanId ? byId.get(s.parentSpanId) : undefined; p; p = p.parentSpanId ? byId.get(p.parentSpanId) : undefined) out.push(p.name);
      return out;
    };
    expect(evaluate.parentSpanId).toBe(webhook.spanId);
    expect(ancestors(dispatch)).toEqual(expect.arrayContaining(["delivery.evaluate", "webhook github"]));
    expect(ancestors(dispatch)[0]).toMatch(/^prisma:/);
    expect(session.parentSpanId).toBe(dispatch.spanId);
    expect(tool.parentSpanId).toBe(session.spanId);
    // The run's trace is the evaluation that created it: the decision and the write-back join it.
    expect(ancestors(approvalSpan)).toContain("delivery.evaluate");
    expect(ancestors(writeBack)).toContain("delivery.evaluate");
    expect(ancestors(writeBack).at(-1)).toBe("webhook github");
    const attr = (s: OtlpSpan, key: string) => Object.values(s.attributes.find((a) => a.key === key)?.value ?? {})[0];
    expect(attr(session, "gen_ai.operation.name")).toBe("invoke_agent");
    expect(attr(session, "gen_ai.request.model")).toBe("claude-sonnet-4-5");
    expect(Number(attr(session, "gen_ai.usage.input_tokens"))).toBe(1200);
    expect(attr(tool, "gen_ai.operation.name")).toBe("execute_tool");
    expect(attr(tool, "gen_ai.tool.name")).toBe("Bash");
    // One `chat <model>` span per model call, children of the agent session, over each call's interval.
    type Timed = OtlpSpan & { startTimeUnixNano: string; endTimeUnixNano: string };
    const chats = received.filter((s) => s.name === "chat claude-sonnet-4-5" && s.traceId === trace) as Timed[];
    expect(chats.map((c) => attr(c, "gen_ai.response.id"))).toEqual(["msg-1", "msg-2"]);
    for (const c of chats) {
      expect(c.parentSpanId).toBe(session.spanId);
      expect(attr(c, "gen_ai.operation.name")).toBe("chat");
      expect(attr(c, "gen_ai.request.model")).toBe("claude-sonnet-4-5");
    }
    expect(chats.map((c) => [Number(attr(c, "gen_ai.usage.input_tokens")), Number(attr(c, "gen_ai.usage.output_tokens"))])).toEqual([
      [700 + 1050, 100],
      [500 + 1050, 200],
    ]);
    expect(Number(attr(chats[0]!, "gen_ai.usage.cache_read.input_tokens"))).toBe(1000);
    const ms = (nanos: string) => Number(BigInt(nanos) / 1_000_000n);
    expect(chats.map((c) => ms(c.endTimeUnixNano) - ms(c.startTimeUnixNano))).toEqual([1200, 800]);
    expect(ms(chats[1]!.startTimeUnixNano) - ms(chats[0]!.startTimeUnixNano)).toBe(1300);
    expect(tool.parentSpanId).not.toBe(chats[0]!.spanId);
    // @prisma/instrumentation: the queries are spans in the same trace.
    expect(received.some((s) => s.name.startsWith("prisma:") && s.traceId === trace)).toBe(true);
  });
});
