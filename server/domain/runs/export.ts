import { repositoryRole, roleAtLeast, type SessionUser } from "@/server/auth/roles";
import type { Db } from "@/server/db";
import { listRunEvents, type TranscriptEvent } from "./transcript";

// A run's transcript as files: JSON lines of its events (the shape runs.events and the SSE
// frames carry, one event a line, seq order; parsing it back gives exactly the stored events)
// and Markdown for reading. Both stream page by page, so a run of any length exports in bounded
// memory.

const PAGE = 1000;

async function* eventsOf(db: Db, runId: string): AsyncGenerator<TranscriptEvent> {
  let after = 0;
  for (;;) {
    const page = await listRunEvents({ db, runId, afterSeq: after, limit: PAGE });
    if (page.length === 0) return;
    yield* page;
    after = page.at(-1)!.seq;
  }
}

export const eventLine = (e: TranscriptEvent) =>
  JSON.stringify({ seq: e.seq, type: e.type, attemptId: e.attemptId, createdAt: e.createdAt.toISOString(), payload: e.payload });

export async function* transcriptJsonl(db: Db, runId: string): AsyncGenerator<string> {
  for await (const e of eventsOf(db, runId)) yield `${eventLine(e)}\n`;
}

type Payload = Record<string, unknown>;
const str = (v: unknown) => (typeof v === "string" ? v : v === undefined ? "" : JSON.stringify(v, null, 2));

/** A fence longer than any backtick run in the text, so agent output cannot close it early. */
function fenced(text: string, lang = ""): string {
  const longest = Math.max(2, ...[...text.matchAll(/`+/g)].map((m) => m[0].length));
  const fence = "`".repeat(longest + 1);
  return `${fence}${lang}\n${text}\n${fence}`;
}

export function eventMarkdown(e: TranscriptEvent): string {
  const p = (e.payload ?? {}) as Payload;
  const head = `#### ${e.seq} · ${e.type} · ${e.createdAt.toISOString()}`;
  switch (e.type) {
    case "message":
      return `${head} · ${str(p.role)}\n\n${fenced(str(p.text), "markdown")}`;
    case "tool_call":
      return `${head} · ${str(p.name)}\n\n${fenced(str(p.input), "json")}`;
    case "tool_result":
      return `${head}${p.isError ? " · error" : ""}\n\n${fenced(str(p.output))}`;
    case "log":
      return `${head} · ${str(p.stream)}\n\n${fenced(str(p.text))}`;
    default:
      return `${head}\n\n${fenced(JSON.stringify(e.payload, null, 2), "json")}`;
  }
}

export async function* transcriptMarkdown(db: Db, run: { id: string; number: number; title: string; status: string }): AsyncGenerator<string> {
  yield `# Run #${run.number}: ${run.title.replace(/[\r\n]+/g, " ")}\n\nStatus: ${run.status}. Run id: \`${run.id}\`.\n\n`;
  for await (const e of eventsOf(db, run.id)) yield `${eventMarkdown(e)}\n\n`;
}

/** An async iterator of text as a byte stream for a Response body. */
export function textStream(chunks: AsyncIterable<string>): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  const it = chunks[Symbol.asyncIterator]();
  return new ReadableStream({
    async pull(controller) {
      const { done, value } = await it.next();
      if (done) controller.close();
      else controller.enqueue(encoder.encode(value));
    },
    async cancel() {
      await it.return?.();
    },
  });
}

export type ExportFormat = "jsonl" | "md";

/**
 * The export as an HTTP answer, for whoever may read the run (viewer on its repository): the
 * REST API's (token) and the console's (session) routes both answer with this. `download` makes
 * it an attachment; without it the JSONL is the raw view, shown as text.
 */
export async function transcriptExportResponse(opts: { db: Db; user: SessionUser; runId: string; format: ExportFormat; download: boolean; rawAsText?: boolean }): Promise<Response> {
  const refuse = (status: number, message: string) => Response.json({ error: { message } }, { status, headers: { "Cache-Control": "no-store" } });
  const run = await opts.db.agentDispatchRun.findUnique({ where: { id: opts.runId }, select: { id: true, number: true, title: true, status: true, repositoryId: true } });
  if (!run) return refuse(404, "No such run.");
  if (!roleAtLeast(await repositoryRole(opts.db, opts.user, run.repositoryId), "viewer")) return refuse(403, "You have no role on this repository.");
  const body = opts.format === "jsonl" ? transcriptJsonl(opts.db, run.id) : transcriptMarkdown(opts.db, run);
  const type = opts.format === "jsonl" ? (opts.rawAsText ? "text/plain; charset=utf-8" : "application/x-ndjson") : "text/markdown; charset=utf-8";
  return new Response(textStream(body), {
    headers: {
      "Cache-Control": "no-store",
      "Content-Type": type,
      "X-Content-Type-Options": "nosniff",
      // Agent output is never run as a page, whatever it contains.
      "Content-Security-Policy": "default-src 'none'; sandbox",
      ...(opts.download ? { "Content-Disposition": `attachment; filename="run-${run.number}.${opts.format}"` } : {}),
    },
  });
}
