// The policy engine's zod schemas and types, for code that parses or renders policies and
// decisions without running the engine (forms, the policies page). Nothing here needs Node.
export {
  zCondition,
  zConclusion,
  zDefaultConclusion,
  zPolicyDefinition,
  zPolicyName,
  zPropertyDefinition,
  zRule,
  zScalar,
} from "./model";
export type {
  Condition,
  Conclusion,
  DefaultConclusion,
  PolicyDefinition,
  PolicyDefinitionInput,
  PropertyDefinition,
  Rule,
  Scalar,
} from "./model";
export { zFact, zFacts, zFactSource } from "./facts";
export type { Fact, Facts, FactSource } from "./facts";
export { zProof, zProofLeaf, zProofNode } from "./proof";
export type { Proof, ProofLeaf, ProofNode } from "./proof";
export { zPolicyDecision, zPolicyRef } from "./decision";
export type { PolicyDecision, PolicyRef } from "./decision";
