// The policy engine: pure functions over definitions and facts. Storage, tRPC and UI live
// elsewhere and call in through these exports.
export * from "./model";
export { definePolicy, parsePolicy, validatePolicy, PolicyDefinitionError } from "./validate";
export type { PolicyIssue, PolicyIssueConstraint } from "./validate";
export {
  zFact,
  zFacts,
  zFactSource,
  assertFacts,
  checkFacts,
  factsFrom,
  PolicyFactError,
} from "./facts";
export type { Fact, FactConstraint, FactSource, Facts, FactViolation } from "./facts";
export { zProof, zProofNode, zProofLeaf, proofLeaves, renderProofTree } from "./proof";
export type { Proof, ProofGroup, ProofLeaf, ProofNode } from "./proof";
export { zPolicyDecision, zPolicyRef } from "./decision";
export type { PolicyDecision, PolicyRef } from "./decision";
export { evaluate, evaluateAll, recheck } from "./evaluate";
export type { EvaluateOptions, RecheckResult } from "./evaluate";
export { renderDecision } from "./render";
export { policyDigest, canonicalJson } from "./digest";
export { checkConflicts } from "./checks/conflicts";
export type { PolicyConflict } from "./checks/conflicts";
export { checkCompleteness } from "./checks/completeness";
export type { PolicyGap } from "./checks/completeness";
export { checkNonVacuity, ruleCoverage } from "./checks/non-vacuity";
export type { VacuousRule } from "./checks/non-vacuity";
export { checkPolicy } from "./checks/check-policy";
export type { PolicyCheckReport } from "./checks/check-policy";
export { formatRegion, regionContains } from "./checks/region";
export type { Assignment, Region, RegionConstraint } from "./checks/region";
export type { CellDescriptor } from "./checks/space";
export { shippedPolicies, ciTriagePolicy, changeGatePolicy, runnerSelectionPolicy } from "./shipped";
export type { ShippedPolicyKind } from "./shipped";
