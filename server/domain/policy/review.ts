import { isAppError } from "@/server/errors";
import { checkPolicy, type PolicyCheckReport } from "./checks/check-policy";
import { ruleCoverage } from "./checks/non-vacuity";
import type { Region } from "./checks/region";
import type { PolicyDecision } from "./decision";
import { evaluate, evaluateAll } from "./evaluate";
import { type Facts } from "./facts";
import { checkFacts, type FactViolation } from "./fact-check";
import type { PolicyDefinition } from "./model";
import { validatePolicy, type PolicyIssue } from "./validate";

// What the editor and the policy pages show beside a definition: the model violations (which
// block saving) and, when there are none, the three checks (which are shown, never hidden, but
// do not block: priority and the fail-closed default still decide).

export type PolicyReview = {
  /** Model violations. A definition with any is refused on save. */
  issues: PolicyIssue[];
  /** Null while there are issues (the checks need a valid model) or when the checks gave up. */
  checks: PolicyCheckReport | null;
  /** For each rule, one region where it decides; null entries are vacuous rules. */
  coverage: { property: string; rule: string; wins: Region | null }[];
  /** Why the checks did not run, e.g. the policy is too complex to check exactly. */
  checkError: string | null;
};

const reviews = new WeakMap<PolicyDefinition, PolicyReview>();

/**
 * Reviews a schema-valid definition. Cached per definition object: stored versions are parsed
 * once and frozen (store.ts), so a page listing them does not rerun the checks.
 */
export function reviewPolicy(definition: PolicyDefinition): PolicyReview {
  const cached = reviews.get(definition);
  if (cached) return cached;
  const issues = validatePolicy(definition);
  let review: PolicyReview;
  if (issues.length > 0) {
    review = { issues, checks: null, coverage: [], checkError: null };
  } else {
    try {
      review = { issues, checks: checkPolicy(definition), coverage: ruleCoverage(definition), checkError: null };
    } catch (err) {
      if (!isAppError(err) || err.reason !== "policy_too_complex") throw err;
      review = { issues, checks: null, coverage: [], checkError: err.message };
    }
  }
  if (Object.isFrozen(definition)) reviews.set(definition, review);
  return review;
}

export type TryResult = { refused: FactViolation[]; decisions: PolicyDecision[] };

/**
 * The editor's sandbox: evaluates facts against a definition without storing anything. Refused
 * facts come back as violations (the form shows them beside the facts) instead of an error.
 */
export function tryPolicy(opts: {
  definition: PolicyDefinition;
  facts: Facts;
  property?: string;
  version?: number;
  digest?: string;
}): TryResult {
  const refused = checkFacts(opts.definition, opts.facts);
  if (refused.length > 0) return { refused, decisions: [] };
  const ref = { version: opts.version, digest: opts.digest };
  const decisions = opts.property
    ? [evaluate(opts.definition, opts.facts, { ...ref, property: opts.property })]
    : Object.values(evaluateAll(opts.definition, opts.facts, ref));
  return { refused: [], decisions };
}
