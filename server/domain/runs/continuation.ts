import { z } from "zod";
import type { Tx } from "@/server/db";
import { truncateText } from "../events/catalogue";

// What a continuation (Send, Resume) carries to the agent, in the child run's context bundle as
// `continuation`: the parent's Claude session to resume (the last attempt that stored one), the
// new text, and the context a person attached to the parent. The claude-code adapter resumes the
// session with `--resume` where its file was kept, and sends only the new text; otherwise the
// run's own prompt starts a fresh session, and that prompt carries a bounded summary of the
// transcript so far with the same new text (continuationSections).

const zAttachment = z.object({
  kind: z.enum(["note", "link", "file_excerpt"]),
  title: z.string().max(200),
  url: z.string().max(2_000).nullable(),
  path: z.string().max(500).nullable(),
  text: z.string().max(4_000),
  attachedBy: z.string().max(200),
});

export const zContinuation = z.object({
  parentRunId: z.string().min(1).max(64),
  parentRunNumber: z.number().int().min(1),
  /** The parent's attempt whose Claude session may be resumed, with that session's id. */
  session: z.object({ attemptNumber: z.number().int().min(1), agentSessionId: z.string().uuid() }).nullable(),
  /** The person's new text: what a resumed session is sent (the attached context, then the instructions). */
  newText: z.string().min(1).max(24_000),
  attachments: z.array(zAttachment).max(20),
});
export type Continuation = z.infer<typeof zContinuation>;
type Attachment = z.infer<typeof zAttachment>;

/** The bundle's continuation, if it has a valid one. */
export function continuationOf(bundle: unknown): Continuation | null {
  const c = (bundle as { continuation?: unknown } | null | undefined)?.continuation;
  const parsed = zContinuation.safeParse(c);
  return parsed.success ? parsed.data : null;
}

const maxSummaryChars = 6_000;
const maxEventsRead = 400;

/** The transcript so far, newest kept, within maxSummaryChars: messages, tool calls and their errors. */
function summaryOf(events: { type: string; payload: unknown }[]): string {
  const lines: string[] = [];
  for (const e of events) {
    const p = e.payload as Record<string, unknown>;
    if (e.type === "message" && typeof p.text === "string") lines.push(`${p.role === "user" ? "User" : "Agent"}: ${truncateText(p.text, 800)}`);
    else if (e.type === "tool_call" && typeof p.name === "string") lines.push(`Tool ${p.name}: ${truncateText(JSON.stringify(p.input ?? null), 200)}`);
    else if (e.type === "tool_result" && p.isError === true && typeof p.output === "string") lines.push(`  failed: ${truncateText(p.output, 200)}`);
    else if (e.type === "permission_denied" && typeof p.toolName === "string") lines.push(`Tool ${p.toolName}: refused by the stack's permissions`);
  }
  const kept: string[] = [];
  let size = 0;
  for (const line of lines.reverse()) {
    if (size + line.length + 1 > maxSummaryChars) {
      kept.push(`(${lines.length - kept.length} earlier lines left out)`);
      break;
    }
    kept.push(line);
    size += line.length + 1;
  }
  return kept.reverse().join("\n");
}

const attachmentText = (a: Attachment) =>
  [`### ${a.title} (${a.kind.replace("_", " ")}, attached by ${a.attachedBy})`, a.url ? `Link: ${a.url}` : "", a.path ? `File: ${a.path}` : "", a.text].filter(Boolean).join("\n");

/**
 * The continuation of `parent` (the caller holds its row lock) and the sections its fresh-session
 * prompt carries. Attached context is redacted when attached (attach-context.ts).
 */
export async function buildContinuation(tx: Tx, opts: { parent: { id: string; number: number }; actorLabel: string; instructions: string | undefined }) {
  const [attempt, attached, events] = await Promise.all([
    tx.dispatchAttempt.findFirst({ where: { runId: opts.parent.id, agentSessionId: { not: null } }, orderBy: { number: "desc" }, select: { number: true, agentSessionId: true } }),
    tx.runEvent.findMany({ where: { runId: opts.parent.id, type: "context_attached" }, orderBy: { seq: "desc" }, take: 20, select: { payload: true } }),
    tx.runEvent.findMany({ where: { runId: opts.parent.id, type: { in: ["message", "tool_call", "tool_result", "permission_denied"] } }, orderBy: { seq: "desc" }, take: maxEventsRead, select: { type: true, payload: true } }),
  ]);
  const attachments = attached
    .reverse()
    .map((e) => e.payload as Partial<Attachment>)
    .map((p) => ({
      kind: p.kind ?? "note",
      title: truncateText(p.title ?? "", 200),
      url: p.url ? truncateText(p.url, 2000) : null,
      path: p.path ? truncateText(p.path, 500) : null,
      text: truncateText(p.text ?? "", 4000),
      attachedBy: truncateText(p.attachedBy ?? "someone", 200),
    }));
  const instructions = opts.instructions?.trim() ? `Instructions from ${opts.actorLabel}:\n${opts.instructions.trim()}` : "Continue from where you stopped.";
  const newText = [...(attachments.length > 0 ? ["## Context attached to the run", ...attachments.map(attachmentText)] : []), instructions].join("\n\n");
  const sessionId = attempt?.agentSessionId;
  const continuation = zContinuation.parse({
    parentRunId: opts.parent.id,
    parentRunNumber: opts.parent.number,
    session: attempt && sessionId && z.string().uuid().safeParse(sessionId).success ? { attemptNumber: attempt.number, agentSessionId: sessionId } : null,
    newText: truncateText(newText, 24_000),
    attachments,
  });
  const summary = summaryOf(events.reverse());
  return { continuation, summary };
}
