import type { PolicyDefinition } from "../model";
import { attributionPolicy } from "./attribution";
import { changeGatePolicy } from "./change-gate";
import { ciTriagePolicy } from "./ci-triage";
import { runnerSelectionPolicy } from "./runner-selection";

export { attributionPolicy, changeGatePolicy, ciTriagePolicy, runnerSelectionPolicy };

/** The policies Airlock ships, keyed by `kind` (the stored Policy.kind). */
export const shippedPolicies = {
  ci_triage: ciTriagePolicy,
  change_gate: changeGatePolicy,
  runner_selection: runnerSelectionPolicy,
  attribution: attributionPolicy,
} as const satisfies Record<string, PolicyDefinition>;

export type ShippedPolicyKind = keyof typeof shippedPolicies;
