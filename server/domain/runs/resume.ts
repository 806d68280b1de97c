import type { Db, Tx } from "@/server/db";
import { transaction } from "@/server/db";
import { AppError } from "@/server/errors";
import { recordAudit, type AuditActor } from "../audit";
import { truncateText } from "../events/catalogue";
import { createChildRun, type ParentRun, parentSelect } from "./child-run";
import { requireRepositoryEnabled } from "./disabled";
import { buildContinuation } from "./continuation";
import { canResumeRun } from "./lifecycle";
import { lockRun } from "./transition";

// Resume: a new run that continues a finished one. Its prompt is the parent's plus a
// continuation section: how the parent ended, what it produced, its last message, and the
// person's instructions, so the agent picks up where the parent stopped. The bundle's
// `continuation` (continuation.ts) lets a Claude Code stack resume the parent's own session.

async function continuationPrompt(tx: Tx, parent: ParentRun, summary: string, newText: string) {
  const [artifacts, lastMessage, lastStatus] = await Promise.all([
    tx.artifact.findMany({ where: { runId: parent.id }, select: { name: true, kind: true, digest: true }, orderBy: { createdAt: "asc" } }),
    tx.runEvent.findFirst({ where: { runId: parent.id, type: "message" }, orderBy: { seq: "desc" }, select: { payload: true } }),
    tx.runEvent.findFirst({ where: { runId: parent.id, type: "status" }, orderBy: { seq: "desc" }, select: { payload: true } }),
  ]);
  const text = (lastMessage?.payload as { text?: unknown } | null)?.text;
  const ended = (lastStatus?.payload as { reason?: unknown } | null)?.reason;
  return [
    parent.prompt,
    "",
    `## Continuation of run #${parent.number}`,
    `Run #${parent.number} ended ${parent.status.replaceAll("_", " ")}${typeof ended === "string" ? `: ${ended}` : ""}.`,
    artifacts.length > 0
      ? `It produced: ${artifacts.map((a) => `${a.name} (${a.kind}, ${a.digest})`).join("; ")}.`
      : "It produced no artifacts.",
    typeof text === "string" ? `Its last message:\n> ${truncateText(text, 2000).replaceAll("\n", "\n> ")}` : "",
    summary ? `The transcript so far (a bounded summary, newest kept):\n${summary}` : "",
    "",
    newText,
  ]
    .filter((line, i, all) => line !== "" || all[i - 1] !== "")
    .join("\n");
}

export async function resumeRun(opts: { db: Db; actor: AuditActor; runId: string; instructions?: string; now?: Date }) {
  const now = opts.now ?? new Date();
  return transaction(opts.db, "resumeRun", async (tx) => {
    await lockRun(tx, opts.runId);
    const parent = await tx.agentDispatchRun.findUnique({ where: { id: opts.runId }, select: parentSelect });
    if (!parent) throw new AppError("NOT_FOUND", "No such run.");
    await requireRepositoryEnabled(tx, parent.repositoryId, "resuming its runs");
    const verdict = canResumeRun(parent.status);
    if (!verdict.ok) throw new AppError("CONFLICT", verdict.reason, { reason: "cannot_resume" });
    // A Claude Code session the adapter can --resume gets the new text alone; a fresh one this prompt.
    const { continuation, summary } = await buildContinuation(tx, { parent, actorLabel: opts.actor.label, instructions: opts.instructions });
    const prompt = await continuationPrompt(tx, parent, summary, continuation.newText);
    const cause = opts.instructions?.trim() ? "continued" : "resumed";
    const child = await createChildRun(tx, { parent, source: "resume", actor: opts.actor, cause, prompt, title: `Resume #${parent.number}: ${parent.title}`, bundleExtras: { continuation }, now });
    await recordAudit(tx, {
      actor: opts.actor,
      action: "run.resume",
      objectType: "AgentDispatchRun",
      objectId: child.id,
      repositoryId: parent.repositoryId,
      detail: { parentRunId: parent.id, promptHash: child.promptHash, instructions: opts.instructions?.trim() || null },
    });
    return { runId: child.id, number: child.number, parentRunId: parent.id };
  });
}
