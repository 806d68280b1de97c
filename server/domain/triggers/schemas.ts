// Trigger rule schema, match keys and defaults, for the /triggers forms. Nothing here needs Node.
export {
  ALLOWED_TASK_KINDS,
  APPLICABLE_KEYS,
  MATCH_KEYS,
  TRIGGER_DEFAULTS,
  setKeys,
  validateTriggerRule,
  zTriggerRule,
  type MatchKey,
  type TriggerRule,
} from "./trigger-rule";
