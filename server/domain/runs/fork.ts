import type { Db } from "@/server/db";
import { transaction } from "@/server/db";
import { AppError, isAppError } from "@/server/errors";
import { zContextBundle } from "../context/context-bundle";
import { renderPrompt } from "../context/prompt";
import { recordAudit, type AuditActor } from "../audit";
import { currentStackVersion } from "../stacks/current-version";
import { contentDigest, digestOf } from "@/server/lib/digest";
import { childBundle, createChildRun, parentSelect } from "./child-run";
import { requireRepositoryEnabled } from "./disabled";
import { canForkRun } from "./lifecycle";

// Fork: a new run from this one's context with an edited prompt, another stack (a snapshot of
// its current version), or both. With another stack and no edited prompt, that stack's template
// is rendered against the same context bundle. The original run is left as it is.

export async function forkRun(opts: { db: Db; actor: AuditActor; runId: string; prompt?: string; stackId?: string; now?: Date }) {
  const now = opts.now ?? new Date();
  const nothing = () => new AppError("BAD_REQUEST", "A fork needs an edited prompt or another stack.", { reason: "nothing_to_fork" });
  if (!opts.prompt?.trim() && !opts.stackId) throw nothing();
  return transaction(opts.db, "forkRun", async (tx) => {
    const parent = await tx.agentDispatchRun.findUnique({ where: { id: opts.runId }, select: parentSelect });
    if (!parent) throw new AppError("NOT_FOUND", "No such run.");
    await requireRepositoryEnabled(tx, parent.repositoryId, "forking its runs");
    // The prompt the dialog sends back unchanged is no edit; the run's own stack is no other stack.
    const edited = opts.prompt?.trim() && opts.prompt !== parent.prompt ? opts.prompt : undefined;
    const otherStack = opts.stackId && opts.stackId !== parent.stackId ? opts.stackId : undefined;
    if (!edited && !otherStack) throw nothing();
    const verdict = canForkRun(parent.status);
    if (!verdict.ok) throw new AppError("CONFLICT", verdict.reason, { reason: "cannot_fork" });

    const stack = otherStack ? await currentStackVersion(tx, otherStack) : undefined;

    let prompt = edited;
    if (!prompt && stack) {
      const bundle = zContextBundle.safeParse(childBundle(parent, "fork"));
      if (!bundle.success) throw new AppError("UNPROCESSABLE", "The run's context bundle cannot render another stack's prompt; edit the prompt instead.", { reason: "bundle_unrenderable" });
      try {
        prompt = renderPrompt(stack.spec.promptTemplate, bundle.data, digestOf(bundle.data)).prompt;
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
