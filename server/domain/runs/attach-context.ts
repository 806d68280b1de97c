import type { Db } from "@/server/db";
import { transaction } from "@/server/db";
import { AppError } from "@/server/errors";
import { recordAudit, type AuditActor } from "../audit";
import { cleanText } from "@/server/lib/text-boundary";
import { redactText } from "../context/redaction/redact";
import { appendRunEvents } from "../events/append";
import { loadKnownSecrets } from "../ingest/known-secrets";
import { parseInput } from "../input";
import { recordCauser } from "./causers";
import { canAttachContext } from "./controls";
import { zAttachContextInput } from "./schemas";
import { lockRunOrThrow } from "./transition";

// "Attach context": a maintainer adds a note, a link or a file excerpt to a running run (or one
// awaiting approval) as a `context_attached` event in its transcript. Every string is redacted
// (token shapes and granted secret values) before it is stored, so a pasted credential never
// reaches the transcript, the SSE stream or the audit log. The event and its audit entry commit
// together under the run's row lock; a retried request (same attachmentId) returns the first
// event instead of adding a second.

export type AttachContextResult = { runId: string; seq: number; attachmentId: string; redactions: number; duplicate: boolean };

export async function attachContext(opts: { db: Db; actor: AuditActor; runId: string; input: unknown }): Promise<AttachContextResult> {
  const input = parseInput(zAttachContextInput, opts.input);
  // Read outside the transaction: the grant names are cached and the lookup may take a moment.
  const secrets = await loadKnownSecrets(opts.db);
  let redactions = 0;
  const clean = (text: string) => {
    const out = redactText(cleanText(text), { secrets });
    redactions += out.report.entries.reduce((sum, e) => sum + e.count, 0);
    return out.text;
  };
  const payload = {
    attachmentId: input.attachmentId,
    kind: input.kind,
    title: clean(input.title),
    url: input.kind === "link" ? clean(input.url) : null,
    path: input.kind === "file_excerpt" ? clean(input.path) : null,
    startLine: input.kind === "file_excerpt" ? input.startLine : null,
    text: clean(input.text),
    attachedBy: opts.actor.label,
    redactions: 0,
  };
  payload.redactions = redactions;

  return transaction(opts.db, "attachContext", async (tx) => {
    const run = await lockRunOrThrow(tx, opts.runId);
    // The row lock serialises attachments to this run, so the retry check cannot race.
    const [earlier] = await tx.$queryRaw<{ seq: number }[]>`
      SELECT "seq" FROM "RunEvent"
      WHERE "runId" = ${opts.runId} AND "type" = 'context_attached' AND "payload"->>'attachmentId' = ${input.attachmentId}
      LIMIT 1`;
    if (earlier) return { runId: opts.runId, seq: earlier.seq, attachmentId: input.attachmentId, redactions, duplicate: true };
    const verdict = canAttachContext(run.status);
    if (!verdict.ok) throw new AppError("CONFLICT", verdict.reason, { reason: "cannot_attach_context" });

    const { lastSeq } = await appendRunEvents({ db: tx, runId: opts.runId, events: [{ type: "context_attached", payload }] });
    // What a person adds to a run's transcript shapes its work: a cause, for the two-person rule.
    await recordCauser(tx, { runId: opts.runId, userId: opts.actor.userId, cause: "attached_context" });
    await recordAudit(tx, {
      actor: opts.actor,
      action: "run.attach_context",
      objectType: "AgentDispatchRun",
      objectId: opts.runId,
      repositoryId: run.repositoryId,
      // What was attached, not its content: the transcript holds that (redacted).
      detail: { attachmentId: input.attachmentId, kind: input.kind, title: payload.title, seq: lastSeq, chars: payload.text.length, redactions },
    });
    return { runId: opts.runId, seq: lastSeq, attachmentId: input.attachmentId, redactions, duplicate: false };
  });
}
