// The policy engine's zod schemas and types, for code that parses or renders policies and
// decisions without running the engine (forms, the policies page). Nothing here needs Node.
export { zPolicyDefinition } from "./model";
export type { Condition, PolicyDefinition, PolicyDefinitionInput, PropertyDefinition, Scalar } from "./model";
export { zFacts, zFactSource } from "./facts";
export type { Facts, FactSource } from "./facts";
export type { ProofLeaf, ProofNode } from "./proof";
export type { PolicyDecision } from "./decision";
