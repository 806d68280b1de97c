// An AgentStack's definition (spec-schema.ts, re-exported here) and the snapshot a run stores of
// it, with its digest. Server code imports this file; browser code imports stacks/schemas.ts,
// which needs no hashing.
import { digestOf } from "@/server/lib/digest";
import type { StackSpec } from "./spec-schema";

export * from "./spec-schema";

/** The snapshot a run stores, and its digest. */
export function stackSnapshot(stack: { id: string; name: string; version: number; spec: StackSpec }) {
  const snapshot = { id: stack.id, name: stack.name, version: stack.version, spec: stack.spec };
  return { snapshot, digest: digestOf(snapshot) };
}
