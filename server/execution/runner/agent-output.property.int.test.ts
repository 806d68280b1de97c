// A property over everything an agent could print: random bytes (NUL, invalid UTF-8, stray CRs),
// arbitrary JSON, Airlock events carrying any UTF-16 (lone surrogates included) and tool calls
// nested up to 60,000 deep go through the real command adapter into PostgreSQL and back out of
// the SSE endpoint. Nothing is lost (every non-blank line becomes at least one event, and the line
// after it all arrives), nothing is thrown (the attempt and the run succeed), nothing is unbounded
// (every frame stays small), and the stream's ids are gap-free.
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { getDb } from "@/server/db";
import { defaultHub, runEventsResponse } from "@/server/streaming/responses";
import { SseParser } from "@/server/streaming/sse-parser";
import { createUser } from "@/server/testing/factories";
import { createExecRun, createLocalRepository, createPool, createStack, drain, scriptedSpec, testWorkerContext } from "@/server/queue/testing/fixtures";
import { dispatchRunTask } from "@/server/queue/tasks/dispatch-run";

const db = getDb();
afterAll(() => defaultHub().stop());

const line = (s: string) => Buffer.from(`${s}\n`);
const chunk = fc.oneof(
  fc.uint8Array({ maxLength: 3000 }).map((b) => Buffer.from(b)),
  fc.jsonValue({ maxDepth: 6 }).map((v) => line(JSON.stringify(v) ?? "null")),
  fc.string({ unit: "binary", maxLength: 200 }).map((text) => line(JSON.stringify({ type: "message", payload: { role: "assistant", text } }))),
  fc.integer({ min: 1, max: 60_000 }).map((depth) =>
    line(`{"type":"tool_call","payload":{"id":"t","name":"Deep","startedAt":"2026-01-05T09:00:00Z","input":${"[".repeat(depth)}0${"]".repeat(depth)}}}`),
  ),
);

async function sseOf(runId: string, user: Awaited<ReturnType<typeof createUser>>) {
  const res = await runEventsResponse(new Request(`http://localhost/api/runs/${runId}/events`), runId, { user: async () => user });
  expect(res.status).toBe(200);
  const reader = res.body!.getReader();
  const parser = new SseParser();
  const decoder = new TextDecoder();
  const events: { id: string | null; event: string; data: string }[] = [];
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    events.push(...parser.push(decoder.decode(value, { stream: true })));
    if (events.some((e) => e.event === "end")) break;
  }
  await reader.cancel().catch(() => undefined);
  return events.filter((e) => e.event !== "end");
}

describe("anything an agent prints: into PostgreSQL and back out of SSE", () => {
  it("loses nothing, throws nothing, keeps everything bounded", async () => {
    const user = await createUser();
    const local = await createLocalRepository({ files: { "README.md": "x\n" }, members: [[user, "maintainer"]] });
    const pool = await createPool({ concurrency: 4 });
    await db.runnerPool.deleteMany({ where: { id: { not: pool.id } } });
    const ctx = testWorkerContext({ dataDir: local.dataDir });
    let n = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(chunk, { maxLength: 6 }), async (chunks) => {
        const tag = `END-OF-OUTPUT-${n++}`;
        const output = Buffer.concat([...chunks, Buffer.from(`\n${tag}\n`)]);
        // The bytes reach the sandboxed agent as its prompt (base64 on stdin): nothing of the
        // host's folders is visible inside but its workspace.
        const script = `let b = ""; process.stdin.setEncoding("utf8").on("data", (d) => (b += d)).on("end", () => process.stdout.write(Buffer.from(b, "base64")))`;
        const stack = await createStack(scriptedSpec({ adapter: { kind: "command", command: ["node", "-e", script], env: [], outputFormat: "airlock" } }));
        const run = await createExecRun({ repositoryId: local.repository.id, stack, sha: local.sha, actorUserId: user.id, prompt: output.toString("base64") });
        await dispatchRunTask({ runId: run.id }, ctx);
        await drain(ctx);

        const after = await db.agentDispatchRun.findUniqueOrThrow({ where: { id: run.id }, include: { attempts: true } });
        expect(after.attempts[0]?.status).toBe("succeeded");
        expect(after.status).toBe("succeeded");

        const frames = await sseOf(run.id, user);
        expect(frames.map((f) => Number(f.id))).toEqual(frames.map((_, i) => i + 1));
        expect(frames.length).toBe(after.lastEventSeq);
        for (const f of frames) expect(f.data.length).toBeLessThan(300_000);
        const events = frames.map((f) => JSON.parse(f.data) as { type: string; payload: { stream?: string; text?: string } });
        const fromAgent = events.filter((e) => ["message", "tool_call", "tool_result", "cost", "heartbeat", "subagent_started", "subagent_completed"].includes(e.type) || (e.type === "log" && e.payload.stream === "stdout"));
        // Every non-blank line the agent printed became at least one event of its own.
        const lines = splitLines(output).filter((l) => new TextDecoder().decode(l).trim() !== "");
        expect(fromAgent.length).toBeGreaterThanOrEqual(lines.length);
        expect(events.filter((e) => e.type === "log" && e.payload.stream === "stdout").at(-1)?.payload.text).toBe(tag);
      }),
      { numRuns: 20, seed: 20261201 },
    );
  }, 240_000);
});

function splitLines(bytes: Buffer): Buffer[] {
  const out: Buffer[] = [];
  let start = 0;
  for (let i = bytes.indexOf(0x0a); i !== -1; i = bytes.indexOf(0x0a, start)) {
    out.push(bytes.subarray(start, i));
    start = i + 1;
  }
  if (start < bytes.length) out.push(bytes.subarray(start));
  return out;
}
