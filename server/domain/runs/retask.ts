import type { Prisma, Tx } from "@/server/db";
import type { TaskKind } from "@/server/db/generated/enums";
import { AppError, isAppError } from "@/server/errors";
import { DEFAULT_OUTPUT_FORMATS } from "../context/build-context-bundle";
import { zContextBundle } from "../context/context-bundle";
import { bundleStack } from "../stacks/bundle-parts";
import { promptHash, renderPrompt } from "../context/prompt";
import { appendRunEvents } from "../events/append";
import { currentStackVersion } from "../stacks/current-version";
import { taskStacks } from "../triggers/task-stacks";
import { digestOf } from "@/server/lib/digest";

// A suggestion dispatched as another task ("Attempt repair" on a suggested diagnosis): before it
// is queued, the run takes the repository's stack for that task (triggers/task-stacks.ts), its
// bundle says the new task and stack, and the prompt is that stack's template rendered against
// the bundle. The repository, commit, pull request and origin (so the trust tier) stay as they
// were. The caller holds the run lock and has checked the run is a suggestion.

export async function retaskSuggestion(tx: Tx, opts: { runId: string; taskKind: TaskKind }) {
  const run = await tx.agentDispatchRun.findUniqueOrThrow({ where: { id: opts.runId }, select: { repositoryId: true, taskKind: true, contextBundle: true } });
  const choice = (await taskStacks(tx, run.repositoryId))[opts.taskKind];
  if (!choice.stack) throw new AppError("CONFLICT", `${choice.reason}.`, { reason: "no_task_stack" });
  const stack = await currentStackVersion(tx, choice.stack.id);
  const parsed = zContextBundle.safeParse(run.contextBundle);
  if (!parsed.success) throw new AppError("UNPROCESSABLE", "The suggestion's context bundle cannot be rendered for another task.", { reason: "bundle_unrenderable" });
  const bundle = {
    ...parsed.data,
    task: { kind: opts.taskKind, outputFormat: DEFAULT_OUTPUT_FORMATS[opts.taskKind] },
    stack: bundleStack({ id: stack.id, name: stack.name, version: stack.version, digest: stack.digest, spec: stack.spec }),
  };
  const contextDigest = digestOf(bundle);
  let prompt: string;
  try {
    prompt = renderPrompt(stack.spec.promptTemplate, bundle, contextDigest).prompt;
  } catch (err) {
    if (isAppError(err)) throw new AppError("UNPROCESSABLE", `Stack ${stack.name}'s prompt template: ${err.message}`, { reason: "invalid_prompt_template" });
    throw err;
  }
  const hash = promptHash(prompt);
  await tx.agentDispatchRun.update({
    where: { id: opts.runId },
    data: {
      taskKind: opts.taskKind,
      stackId: stack.id,
      stackVersion: stack.version,
      stackSnapshot: stack.snapshot as Prisma.InputJsonValue,
      stackDigest: stack.digest,
      contextBundle: bundle as Prisma.InputJsonValue,
      contextDigest,
      prompt,
      promptHash: hash,
    },
  });
  await appendRunEvents({
    db: tx,
    runId: opts.runId,
    events: [
      {
        type: "context_assembled",
        payload: {
          digest: contextDigest,
          promptHash: hash,
          sizeBytes: Buffer.byteLength(JSON.stringify(bundle)),
          labels: bundle.contextLabels.map((l) => l.name).slice(0, 200),
          redactions: bundle.redaction.entries.reduce((n, e) => n + e.count, 0),
          truncated: bundle.logs.some((l) => l.truncated),
        },
      },
    ],
  });
  return { from: run.taskKind, to: opts.taskKind, stack: { id: stack.id, name: stack.name, version: stack.version, digest: stack.digest }, rule: choice.rule };
}
