import { randomUUID } from "node:crypto";
import type pg from "pg";

// Bench data: a repository, runs, a 100,000-event transcript inserted in bulk
// (multi-row INSERT via unnest, ~100k rows/s), and single-event appends the
// way a worker appends (counter bump, insert, NOTIFY, commit).

export async function createRepository(db: pg.Client): Promise<string> {
  const id = `bench${randomUUID().slice(0, 8)}`;
  await db.query(`INSERT INTO "Repository" ("id", "fullName", "cloneUrl", "updatedAt") VALUES ($1, $2, $3, now())`, [id, `bench/${id}`, `https://example.test/${id}.git`]);
  return id;
}

export async function createRun(db: pg.Client, repositoryId: string, title: string): Promise<string> {
  const id = `bench${randomUUID().replaceAll("-", "").slice(0, 20)}`;
  const digest = `sha256:${"0".repeat(64)}`;
  await db.query(
    `INSERT INTO "AgentDispatchRun" ("id", "title", "repositoryId", "source", "taskKind", "actor", "status", "headSha",
       "stackSnapshot", "stackDigest", "contextBundle", "contextDigest", "prompt", "promptHash", "dedupeKey", "updatedAt")
     VALUES ($1, $2, $3, 'manual', 'diagnose', 'bench', 'running', $4, '{"name":"bench","version":1}', $5, '{}', $5, 'p', $5, $6, now())`,
    [id, title, repositoryId, "b".repeat(40), digest, `bench:${id}`],
  );
  return id;
}

const words = "the check failed because a flaky retry in the payment reconciler raced the ledger writer while the cache warmed".split(" ");
const sentence = (seq: number, n: number) => Array.from({ length: n }, (_, i) => words[(seq * 7 + i * 3) % words.length]).join(" ");

/** A realistic mix: messages, paired tool calls and results, logs (some coloured), cost and heartbeats. */
export function syntheticEvent(seq: number): { type: string; payload: object } {
  const at = new Date(Date.UTC(2026, 10, 29, 10) + seq * 100).toISOString();
  switch (seq % 10) {
    case 0:
      return { type: "message", payload: { role: "assistant", text: `**Step ${seq}.** ${sentence(seq, 40)}.\n\n- ${sentence(seq + 1, 12)}\n- \`${sentence(seq + 2, 4)}\`` } };
    case 1:
    case 5:
      return { type: "tool_call", payload: { id: `call-${seq}`, name: seq % 20 === 1 ? "Bash" : "Read", input: { command: `npm test -- --grep "${sentence(seq, 3)}"` }, startedAt: at } };
    case 2:
    case 6:
      return { type: "tool_result", payload: { toolCallId: `call-${seq - 1}`, output: `${sentence(seq, 20)}\n\u001b[32m✓\u001b[0m ${sentence(seq + 3, 12)}\n\u001b[31m✗\u001b[0m ${sentence(seq + 5, 8)}`, isError: seq % 60 === 2, durationMs: 40 + (seq % 900) } };
    case 3:
    case 7:
    case 8:
      return { type: "log", payload: { stream: seq % 3 === 0 ? "stderr" : "stdout", text: `[${at}] ${sentence(seq, 14)}` } };
    case 4:
      return { type: "cost", payload: { inputTokens: seq * 31, outputTokens: seq * 7, usd: seq * 0.00002, model: "claude-sonnet-4-5" } };
    default:
      return { type: "heartbeat", payload: { sessionId: "bench-session" } };
  }
}

/** Inserts `count` events into a run in multi-row batches; returns the JSON bytes written. */
export async function bulkInsertEvents(db: pg.Client, runId: string, count: number): Promise<number> {
  let bytes = 0;
  const batch = 2_000;
  for (let start = 1; start <= count; start += batch) {
    const seqs: number[] = [];
    const types: string[] = [];
    const payloads: string[] = [];
    const times: string[] = [];
    for (let seq = start; seq < Math.min(start + batch, count + 1); seq++) {
      const e = syntheticEvent(seq);
      const json = JSON.stringify(e.payload);
      bytes += Buffer.byteLength(json);
      seqs.push(seq);
      types.push(e.type);
      payloads.push(json);
      times.push(new Date(Date.UTC(2026, 10, 29, 10) + seq * 100).toISOString());
    }
    await db.query(
      `INSERT INTO "RunEvent" ("runId", "seq", "type", "payload", "createdAt")
       SELECT $1, s, t, p::jsonb, c FROM unnest($2::int[], $3::text[], $4::text[], $5::timestamptz[]) AS u(s, t, p, c)`,
      [runId, seqs, types, payloads, times],
    );
  }
  await db.query(`UPDATE "AgentDispatchRun" SET "lastEventSeq" = $2 WHERE "id" = $1`, [runId, count]);
  return bytes;
}

/**
 * Appends one event as a worker does. `onCommitting` gets its seq and the time
 * just before COMMIT, called before COMMIT is sent: a listener in this same
 * process may receive the event before the COMMIT's reply is even read.
 */
export async function appendOne(db: pg.Client, runId: string, payload: object, onCommitting: (seq: number, at: number) => void, type = "log"): Promise<number> {
  await db.query("BEGIN");
  const { rows } = await db.query<{ lastEventSeq: number }>(`UPDATE "AgentDispatchRun" SET "lastEventSeq" = "lastEventSeq" + 1 WHERE "id" = $1 RETURNING "lastEventSeq"`, [runId]);
  const seq = rows[0]!.lastEventSeq;
  await db.query(`INSERT INTO "RunEvent" ("runId", "seq", "type", "payload") VALUES ($1, $2, $3, $4)`, [runId, seq, type, JSON.stringify(payload)]);
  await db.query(`SELECT pg_notify('airlock_run_events', $1)`, [JSON.stringify({ runId, seq })]);
  onCommitting(seq, Date.now());
  await db.query("COMMIT");
  return seq;
}

/**
 * Appends at `perSecond` for `seconds`, one event per transaction, on a steady
 * clock (catching up when behind). Calls `onCommit` for each, just before its COMMIT.
 */
export async function appendAtRate(db: pg.Client, runId: string, perSecond: number, seconds: number, onCommit: (seq: number, committedAt: number) => void) {
  const start = Date.now();
  const total = perSecond * seconds;
  for (let i = 0; i < total; i++) {
    const due = start + (i * 1000) / perSecond;
    const wait = due - Date.now();
    if (wait > 1) await new Promise((r) => setTimeout(r, wait));
    await appendOne(db, runId, { stream: "stdout", text: `live event ${i} ${sentence(i, 10)}` }, onCommit);
  }
  return { appended: total, seconds: (Date.now() - start) / 1000 };
}

export function percentile(values: number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}
