import type { PolicyDecision } from "./decision";
import { renderProofTree } from "./proof";

function show(value: unknown): string {
  return typeof value === "string" ? value : String(value);
}

/** A decision as a few lines of text: the outcome, why, and the proof beneath it. */
export function renderDecision(decision: PolicyDecision): string {
  const head = `${decision.property} = ${show(decision.value)}`;
  const { proof } = decision;
  if (proof.via === "rule") {
    return [`${head}   via ${proof.rule}: ${proof.explanation}`, ...renderProofTree(proof.tree)].join("\n");
  }
  const lines = [`${head}   by default: ${proof.explanation}`];
  for (const unmatched of proof.unmatched) {
    lines.push(`  ${unmatched.rule} (priority ${unmatched.priority}) did not match:`);
    lines.push(...renderProofTree(unmatched.tree).map((line) => `    ${line}`));
  }
  return lines.join("\n");
}
