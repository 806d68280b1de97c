// Everything a candidate run of a stack gets, in one call: the stack snapshot and its digest, the
// context bundle (contextInputFor: the event, Airlock's facts, the matched rule) and its digest,
// the rendered prompt and its hash. The trigger path's prepareRun makes runs from these steps, and
// the stack editor's preview calls this for an unsaved spec, so a preview shows exactly what a run
// would get. Pure: callers load the event, the facts and the secrets.
import { contextInputFor, type ContextInputArgs } from "./context-input";
import { stackSnapshot, type StackSpec } from "@/server/domain/stacks/spec";
import { buildContextBundle, type BuiltContext } from "@/server/domain/context/build-context-bundle";
import { renderPrompt, type RenderedPrompt } from "@/server/domain/context/prompt";
import type { KnownSecret } from "@/server/domain/context/redaction/redact";

export type CandidateStack = { id: string; name: string; version: number; spec: StackSpec };

export type AssembleCandidateArgs = Omit<ContextInputArgs, "stack"> & {
  stack: CandidateStack;
  /** Granted secret values to redact (names only reach the bundle). */
  secrets: readonly KnownSecret[];
};

export type AssembledCandidate = {
  /** AgentDispatchRun.stackSnapshot / stackDigest. */
  snapshot: ReturnType<typeof stackSnapshot>["snapshot"];
  stackDigest: string;
  /** AgentDispatchRun.contextBundle / contextDigest. */
  context: BuiltContext;
  /** AgentDispatchRun.prompt / promptHash. */
  prompt: RenderedPrompt;
};

/**
 * Throws AppError UNPROCESSABLE when the bundle is invalid or the template does not render
 * (unknown or malformed placeholders); the trigger path refuses such a run and keeps the delivery.
 */
export function assembleCandidate(args: AssembleCandidateArgs): AssembledCandidate {
  const { snapshot, digest } = stackSnapshot(args.stack);
  const context = buildContextBundle(contextInputFor({ ...args, stack: { ...args.stack, digest } }), { secrets: args.secrets });
  const prompt = renderPrompt(args.stack.spec.promptTemplate, context.bundle, context.digest);
  return { snapshot, stackDigest: digest, context, prompt };
}
