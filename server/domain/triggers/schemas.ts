// Trigger rule match keys and defaults, for the /triggers forms. Nothing here needs Node.
export { ALLOWED_TASK_KINDS, APPLICABLE_KEYS, TRIGGER_DEFAULTS, type MatchKey } from "./trigger-rule";
