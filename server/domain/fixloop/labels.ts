import type { LabelChange } from "../approvals/schemas";

// The ready-for-agent / ready-for-human flip. It is a write-back of kind `set_labels` like any
// other: the escalation asks for it through the change gate (requestWriteBack: held for approval
// unless exempt), "re-open for agents" records it as the maintainer's own action, and the
// write-back executor calls the forge's idempotent setLabels and stores the forge's answer on
// Airlock's copy of the PR. Until then Airlock's copy shows what the forge has, not the flip.

type LabelNames = { agentReadyLabel: string; humanReadyLabel: string };

/** The escalation hands the PR to a person. */
export const escalationFlip = (repo: LabelNames): LabelChange => ({ add: [repo.humanReadyLabel], remove: [repo.agentReadyLabel] });

/** "Re-open for agents" hands it back. */
export const reopenFlip = (repo: LabelNames): LabelChange => ({ add: [repo.agentReadyLabel], remove: [repo.humanReadyLabel] });
