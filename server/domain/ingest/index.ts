// Ingest: forge deliveries -> normalised CI events, who may dispatch, and failure signatures.
// Pure: the webhook route verifies, records and enqueues around these.
export * from "./schemas";
export { fromGithub, type FromGithubOptions } from "./from-github";
export { DEFAULT_BOT_HANDLE, KNOWN_COMMAND_PHRASES, normaliseHandle, parseBotCommand, type ParsedCommand } from "./pr-command";
export { decideActorPermission, type PermissionDecision, type PermissionInput } from "./actor-permission";
export {
  SIGNATURE_HEX_LENGTH,
  SIGNATURE_VERSION,
  analyseLog,
  failureSignature,
  locateFirstError,
  type FailureSignature,
  type FailureSignatureOptions,
} from "./failure/failure-signature";
export { cleanLine, normaliseForSignature, normaliseJobName, splitLines, stripAnsi } from "./failure/normalise";
export { formatIssues, issuesToText, type Issue } from "./zod-issues";
