import type { PolicyDefinition } from "../model";
import { checkCompleteness, type PolicyGap } from "./completeness";
import { checkConflicts, type PolicyConflict } from "./conflicts";
import { checkNonVacuity, type VacuousRule } from "./non-vacuity";

export type PolicyCheckReport = {
  conflicts: PolicyConflict[];
  gaps: PolicyGap[];
  vacuous: VacuousRule[];
};

/** All three checks, as run before a definition is saved. They share one cached fact space. */
export function checkPolicy(policy: PolicyDefinition, options: { property?: string } = {}): PolicyCheckReport {
  return {
    conflicts: checkConflicts(policy, options),
    gaps: checkCompleteness(policy, options),
    vacuous: checkNonVacuity(policy, options),
  };
}
