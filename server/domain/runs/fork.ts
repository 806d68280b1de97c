import type { Db, Prisma } from "@/server/db";
import { transaction } from "@/server/db";
import { AppError, isAppError } from "@/server/errors";
import { zContextBundle } from "../context/context-bundle";
import { renderPrompt } from "../context/prompt";
import { recordAudit, type AuditActor } from "../audit";
import { stackSnapshot, zStackSpec } from "../stacks/spec";
import { contentDigest, digestOf } from "@/server/lib/digest";
import { childBundle, createChildRun, parentSelect } from "./child-run";
import { requireRepositoryEnabled } from "../repositories/disabled";
import { canForkRun } from "./lifecycle";

// Fork: a new run from this one's context with an edited prompt, another stack (a snapshot of
// its current version), or both. With another stack and no edited prompt, that stack's template
// is rendered against the same context bundle. The original run is left as it is.

export async function forkRun(opts: { db: Db; actor: AuditActor; runId: string; prompt?: string; stackId?: string; now?: Date }) {
  const now = opts.now ?? new Date();
  const edited = opts.prompt?.trim() ? opts.prompt : undefined;
  if (!edited && !opts.stackId) throw new AppError("BAD_REQUEST", "A fork needs an edited prompt or another stack.", { reason: "nothing_to_fork" });
  return transaction(opts.db, "forkRun", async (tx) => {
    const parent = await tx.agentDispatchRun.findUnique({ where: { id: opts.runId }, select: parentSelect });
    if (!parent) throw new AppError("NOT_FOUND", "No such run.");
    await requireRepositoryEnabled(tx, parent.repositoryId, "forking its runs");
    const verdict = canForkRun(parent.status);
    if (!verdict.ok) throw new AppError("CONFLICT", verdict.reason, { reason: "cannot_fork" });

    let stack: { id: string; version: number; snapshot: Prisma.JsonValue; digest: string; template: string } | undefined;
    if (opts.stackId) {
      const row = await tx.agentStack.findUnique({
        where: { id: opts.stackId },
        select: { id: true, name: true, archivedAt: true, versions: { orderBy: { version: "desc" }, take: 1 } },
      });
      const version = row?.versions[0];
      if (!row || !version) throw new AppError("NOT_FOUND", "No such stack.", { reason: "no_such_stack" });
      if (row.archivedAt) throw new AppError("CONFLICT", `Stack ${row.name} is archived.`, { reason: "stack_archived" });
      const spec = zStackSpec.safeParse(version.spec);
      if (!spec.success) throw new AppError("UNPROCESSABLE", `Stack ${row.name} v${version.version} is not a valid stack definition.`, { reason: "invalid_stack" });
      const snap = stackSnapshot({ id: row.id, name: row.name, version: version.version, spec: spec.data });
      stack = { id: row.id, version: version.version, snapshot: snap.snapshot as Prisma.JsonValue, digest: snap.digest, template: spec.data.promptTemplate };
    }

    let prompt = edited;
    if (!prompt && stack) {
      const bundle = zContextBundle.safeParse(childBundle(parent, "fork"));
      if (!bundle.success) throw new AppError("UNPROCESSABLE", "The run's context bundle cannot render another stack's prompt; edit the prompt instead.", { reason: "bundle_unrenderable" });
      try {
        prompt = renderPrompt(stack.template, bundle.data, digestOf(bundle.data)).prompt;
      } catch (err) {
        if (isAppError(err)) throw new AppError("UNPROCESSABLE", `The stack's prompt template: ${err.message}`, { reason: "invalid_prompt_template" });
        throw err;
      }
    }
    const child = await createChildRun(tx, { parent, source: "fork", actor: opts.actor, cause: "forked", prompt: prompt ?? parent.prompt, title: `Fork of #${parent.number}: ${parent.title}`, stack, now });
    await recordAudit(tx, {
      actor: opts.actor,
      action: "run.fork",
      objectType: "AgentDispatchRun",
      objectId: child.id,
      repositoryId: parent.repositoryId,
      detail: {
        parentRunId: parent.id,
        promptEdited: edited !== undefined,
        promptDigest: contentDigest(prompt ?? parent.prompt),
        stackDigest: stack?.digest ?? parent.stackDigest,
      },
    });
    return { runId: child.id, number: child.number, parentRunId: parent.id };
  });
}
