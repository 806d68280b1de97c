import { z } from "zod";
import { zFacts } from "./facts";
import { zScalar } from "./model";
import { zProof } from "./proof";

// The stored shape of a decision. Kept apart from evaluate.ts so client code can parse and
// render decisions without pulling in the engine's Node dependencies (the digest uses crypto).

export const zPolicyRef = z.strictObject({
  kind: z.string(),
  version: z.int().nullable(),
  digest: z.string().nullable(),
});
export type PolicyRef = z.infer<typeof zPolicyRef>;

/** What is stored for every automated decision (PolicyDecision): facts, outcome and proof. */
export const zPolicyDecision = z.strictObject({
  policy: zPolicyRef,
  subject: z.string(),
  property: z.string(),
  value: zScalar,
  /** The winning rule, or null when the default applied. */
  rule: z.string().nullable(),
  explanation: z.string(),
  facts: zFacts,
  proof: zProof,
});
export type PolicyDecision = z.infer<typeof zPolicyDecision>;

