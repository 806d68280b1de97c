import type { Tx } from "@/server/db";
import { decide } from "../policy/decide";
import { PolicyFactError } from "../policy/fact-check";
import { factsFrom } from "../policy/facts";
import type { Scalar } from "../policy/model";

// One question to the change gate (a write-back, a privileged launch): its stored decision, or,
// when the stored policy refuses the facts (a version from before one of them), a person must
// approve: the gate fails closed and says why.

export type ChangeGateVerdict = { required: boolean; policyDecisionId: string | null; rule: string | null; reason: string };

export async function changeGateVerdict(
  tx: Tx,
  opts: { runId: string; subject: string; facts: Record<string, Scalar | null | undefined>; whenFactsRefused: string },
): Promise<ChangeGateVerdict> {
  try {
    const gate = await decide({ db: tx, kind: "change_gate", runId: opts.runId, subject: opts.subject, facts: factsFrom("system", opts.facts) });
    return { required: gate.decision.value !== false, policyDecisionId: gate.id, rule: gate.decision.rule ?? null, reason: gate.decision.explanation };
  } catch (err) {
    if (!(err instanceof PolicyFactError)) throw err;
    return { required: true, policyDecisionId: null, rule: null, reason: `The change gate refused its facts (${err.message}); ${opts.whenFactsRefused}.` };
  }
}
