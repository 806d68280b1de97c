// What a hostile or broken agent prints cannot erase its transcript: the real command adapter runs
// a real process whose stdout carries NUL bytes, unpaired surrogates, NUL inside JSON keys,
// 50,000-deep JSON, a 20 MB line and invalid UTF-8, and everything before and after it is stored
// in PostgreSQL, bounded, with the attempt's status right. And a transcript write the database
// refuses is retried, isolated and makes the attempt fail: a run never reaches approval with a
// gap in its transcript.
import { describe, expect, it } from "vitest";
import { getDb } from "@/server/db";
import { createUser } from "@/server/testing/factories";
import { createExecRun, createLocalRepository, createPool, createStack, drain, scriptedSpec, testWorkerContext } from "@/server/queue/testing/fixtures";
import { dispatchRunTask } from "@/server/queue/tasks/dispatch-run";

const db = getDb();

/** A command agent that runs `script` with node (stdout is the transcript). */
async function runAgent(script: string) {
  const user = await createUser();
  // The agent is the repository's own code, as a fork's would be: the sandbox shows it nothing else.
  const local = await createLocalRepository({ files: { "README.md": "x\n", "agent.cjs": script }, members: [[user, "maintainer"]] });
  const pool = await createPool();
  await db.runnerPool.deleteMany({ where: { id: { not: pool.id } } });
  const spec = scriptedSpec({ adapter: { kind: "command", command: ["node", "agent.cjs"], env: [], outputFormat: "airlock" } });
  const stack = await createStack(spec);
  const ctx = testWorkerContext({ dataDir: local.dataDir });
  const run = await createExecRun({ repositoryId: local.repository.id, stack, sha: local.sha, actorUserId: user.id });
  await dispatchRunTask({ runId: run.id }, ctx);
  await drain(ctx);
  const after = await db.agentDispatchRun.findUniqueOrThrow({ where: { id: run.id }, include: { attempts: true, approvals: true, artifacts: true } });
  const events = await db.runEvent.findMany({ where: { runId: run.id }, orderBy: { seq: "asc" } });
  return { run: after, events };
}

const texts = (events: { type: string; payload: unknown }[]) =>
  events.map((e) => (e.payload as { text?: string; output?: string }).text ?? JSON.stringify(e.payload));

// The agent's lines, written as raw bytes so nothing in between cleans them.
const HOSTILE_AGENT = String.raw`
const out = (s) => process.stdout.write(s);
const ev = (e) => out(JSON.stringify(e) + "\n");
ev({ type: "message", payload: { role: "assistant", text: "before everything" } });
out("raw NUL \u0000 in a plain line\n");
out('{"type":"message","payload":{"role":"assistant","text":"escaped NUL \\u0000 in JSON"}}\n');
out('{"type":"message","payload":{"role":"assistant","text":"lone surrogate \\ud800 here"}}\n');
out('{"type":"tool_call","payload":{"id":"t1","name":"Bash","startedAt":"2026-01-05T09:00:00Z","input":{"k\\u0000ey":"v","\\udfff":1}}}\n');
out('{"type":"tool_call","payload":{"id":"t2","name":"Deep","startedAt":"2026-01-05T09:00:00Z","input":' + "[".repeat(50000) + "1" + "]".repeat(50000) + "}}\n");
out('{"type":"assistant","message":{"content":[{"type":"tool_use","id":"u1","name":"Bash","input":' + '{"a":'.repeat(50000) + "1" + "}".repeat(50000) + "}]}}\n");
const chunk = "x".repeat(1 << 20);
for (let i = 0; i < 20; i++) out(chunk);
out("\n");
out(Buffer.from([0x69, 0x6e, 0x76, 0x61, 0x6c, 0x69, 0x64, 0x20, 0xff, 0xfe, 0xc3, 0x28, 0x20, 0xed, 0xa0, 0x80, 0x0a]));
process.stderr.write("stderr NUL \u0000 and surrogate bytes \xed\xa0\x80\n");
ev({ type: "message", payload: { role: "assistant", text: "after everything" } });
require("node:fs").writeFileSync(process.env.AIRLOCK_ARTIFACTS_DIR + "/fix.patch", "--- a/README.md\n+++ b/README.md\n@@ -1 +1 @@\n-x\n+y\n");
`;

describe("hostile agent output through the command adapter and PostgreSQL", () => {
  it("stores every line before and after NUL, surrogates, NUL keys, 50,000-deep JSON, a 20 MB line and invalid UTF-8, bounded", async () => {
    const { run, events } = await runAgent(HOSTILE_AGENT);
    expect(run.attempts[0]).toMatchObject({ status: "succeeded" });
    expect(run.status).toBe("awaiting_approval");
    expect(run.approvals).toHaveLength(1);
    // Gap-free, in order, and the run's counter agrees.
    expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
    expect(run.lastEventSeq).toBe(events.length);

    const all = texts(events);
    const at = (needle: string) => all.findIndex((t) => t.includes(needle));
    expect(at("before everything")).toBeGreaterThanOrEqual(0);
    expect(at("after everything")).toBeGreaterThan(at("before everything"));
    expect(all).toContain("raw NUL \u2400 in a plain line");
    expect(all).toContain("escaped NUL \u2400 in JSON");
    expect(all).toContain("lone surrogate \ufffd here");
    const keyed = events.find((e) => e.type === "tool_call" && (e.payload as { id: string }).id === "t1")!.payload as { input: Record<string, unknown> };
    expect(keyed.input).toEqual({ "k\u2400ey": "v", "\ufffd": 1 });
    const deep = events.find((e) => e.type === "tool_call" && (e.payload as { id: string }).id === "t2")!;
    expect(JSON.stringify(deep.payload)).toContain("…[cut: nested deeper than 32 levels]");
    // Not an Airlock event (this stack reads Airlock's format): kept as text, cut to the bound.
    expect(all.find((t) => t.startsWith('{"type":"assistant"'))!.length).toBeLessThan(70_000);
    const long = all.find((t) => t.startsWith("xxxxxxxx"))!;
    expect(long.length).toBeLessThan(70_000);
    expect(long).toMatch(/…\[cut: 2\d\.\d MB of a line too long to keep\]$/);
    expect(all.some((t) => t.startsWith("invalid \ufffd"))).toBe(true);
    expect(all.some((t) => t.startsWith("stderr NUL \u2400"))).toBe(true);
    // Nothing unbounded reached the table: the whole transcript is well under a megabyte.
    const [size] = await db.$queryRaw<{ bytes: number }[]>`SELECT sum(pg_column_size("payload"))::int AS bytes FROM "RunEvent" WHERE "runId" = ${run.id}`;
    expect(size!.bytes).toBeLessThan(1_000_000);
  });
});

describe("no silent loss", () => {
  it("an event the database refuses is retried, isolated and shown; the attempt fails and the run never reaches approval", async () => {
    // A real PostgreSQL refusal, for one event only: the rest of its batch and everything after it
    // must still be stored.
    await db.$executeRawUnsafe(`CREATE OR REPLACE FUNCTION refuse_marked_event() RETURNS trigger AS $$
      BEGIN IF NEW."payload"::text LIKE '%refuse-me-7f3a%' THEN RAISE EXCEPTION 'test trigger refuses this row'; END IF; RETURN NEW; END $$ LANGUAGE plpgsql`);
    await db.$executeRawUnsafe(`CREATE TRIGGER refuse_marked_event BEFORE INSERT ON "RunEvent" FOR EACH ROW EXECUTE FUNCTION refuse_marked_event()`);
    try {
      const { run, events } = await runAgent(String.raw`
const ev = (e) => process.stdout.write(JSON.stringify(e) + "\n");
ev({ type: "message", payload: { role: "assistant", text: "first" } });
ev({ type: "message", payload: { role: "assistant", text: "refuse-me-7f3a" } });
ev({ type: "message", payload: { role: "assistant", text: "third" } });
require("node:fs").writeFileSync(process.env.AIRLOCK_ARTIFACTS_DIR + "/fix.patch", "--- a/README.md\n+++ b/README.md\n@@ -1 +1 @@\n-x\n+y\n");
`);
      const all = texts(events);
      expect(all).toContain("first");
      expect(all).toContain("third");
      expect(all).not.toContain("refuse-me-7f3a");
      expect(all.some((t) => t.startsWith("An agent event (message) could not be stored: ") && t.includes("test trigger refuses this row"))).toBe(true);
      expect(all.indexOf("first")).toBeLessThan(all.indexOf("third"));
      expect(run.attempts[0]).toMatchObject({ status: "failed", exitReason: expect.stringMatching(/^1 transcript event could not be stored: .*test trigger refuses this row.* \(1 event lost in all\)$/) });
      expect(run.status).toBe("failed");
      expect(run.approvals).toHaveLength(0);
      // The reason is an event too.
      expect(events.some((e) => e.type === "status" && (e.payload as { to: string; reason: string }).to === "failed" && (e.payload as { reason: string }).reason.includes("could not be stored"))).toBe(true);
    } finally {
      await db.$executeRawUnsafe(`DROP TRIGGER IF EXISTS refuse_marked_event ON "RunEvent"`);
    }
  });
});
