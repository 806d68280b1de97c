// Trigger evaluation: normalised event + facts + rules -> candidate runs with their dedupe keys,
// and the reasons rules were skipped. Pure: the caller creates runs and records drops.
export * from "./schemas";
export { matchTriggers, resolveAction, type Candidate, type MatchInput, type MatchResult, type Skip } from "./matcher";
export type { EventFacts, MatchOptions, RepositoryFacts } from "./match-types";
export {
  checkRerunDedupeKey,
  dispatchDedupeKey,
  failedCheckDedupeKey,
  flakyScanDedupeKey,
  releaseDedupeKey,
  type CheckRerunKeyInput,
  type DispatchKeyInput,
  type FailedCheckKeyInput,
  type FlakyScanKeyInput,
  type ReleaseKeyInput,
} from "./dedupe-keys";
