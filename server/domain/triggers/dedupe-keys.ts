// Dedupe keys: AgentDispatchRun.dedupeKey is unique, so a second trigger with the same key is
// dropped (TriggerDrop) instead of creating a second run.
//
// Format: `<kind>:<readable part>:...:<hash>`
// - the readable parts are for people (logs, the TriggerDrop table): each is slugged to
//   [A-Za-z0-9._/-], cut to 40 characters, SHAs to 12; a missing part is "-";
// - the hash is the first 32 hex characters of sha256 over the full, unslugged parts
//   (JSON ["airlock-dedupe", 1, kind, ...parts]), so two keys are equal exactly when every part
//   is equal, however the readable prefix was shortened.
//
// Parts, per the spec ("CI trigger contracts" and its acceptance criteria):
//   failed-check: repository, source (pr-<n>, or check-<workflow> outside a PR), commit SHA, job, step,
//                 failure signature, context digest (ci-events/failure/context-digest.ts), rule id
//   check-rerun:  original run id, approved artifact digest, target check
//   release:      repository, version, commit SHA, artifact digests (sorted, deduplicated); the
//                 spec names no repository, but two repositories holding one commit (a mirror, a
//                 fork) releasing one version are two releases
//   flaky-scan:   failure signature, query digest, result-set digest
//   pr-comment / label / manual:
//                 repository, PR (pr-<n> or none), head SHA, command, rule id
//
// A key with a rule id has a subject key: the same parts without the rule ("this failure", "this
// request"). Two rules that match one subject compete (triggers/precedence.ts); kinds whose key
// names no rule are their own subject.
import { createHash } from "node:crypto";

// 2: the failed-check key gained the context digest.
const KEY_VERSION = 2;
const HASH_HEX = 32;
const PART_MAX = 40;
const SHA_SHORT = 12;

type Part = string | number | null | readonly string[];

function slug(part: Part, max = PART_MAX): string {
  if (part === null) return "-";
  if (Array.isArray(part)) return `${part.length}`;
  const s = String(part)
    .replace(/[^A-Za-z0-9._/-]+/g, "-")
    .replace(/-{2,}/g, "-")
    .replace(/^-|-$/g, "");
  return (s === "" ? "_" : s).slice(0, max);
}

function key(kind: string, readable: string[], parts: Part[]): string {
  const hash = createHash("sha256")
    .update(JSON.stringify(["airlock-dedupe", KEY_VERSION, kind, ...parts]))
    .digest("hex")
    .slice(0, HASH_HEX);
  return [kind, ...readable, hash].join(":");
}

const sha = (s: string | null) => (s === null ? "-" : slug(s, SHA_SHORT));

export type FailedCheckSubjectInput = {
  repository: string;
  /** The PR the check ran for, when known. */
  pullRequestNumber: number | null;
  /** Outside a PR, the check's workflow (or check name) stands in as the source object. */
  checkSource: string | null;
  commitSha: string;
  job: string | null;
  step: string | null;
  failureSignature: string | null;
  /** failureContextDigest of the failure's log excerpt and artifacts. */
  contextDigest: string;
};
export type FailedCheckKeyInput = FailedCheckSubjectInput & { ruleId: string };

function failedCheckParts(p: FailedCheckSubjectInput) {
  const source = p.pullRequestNumber !== null ? `pr-${p.pullRequestNumber}` : `check-${p.checkSource ?? "unknown"}`;
  return {
    readable: [slug(p.repository), slug(source), sha(p.commitSha), slug(p.job), slug(p.step), slug(p.failureSignature), sha(p.contextDigest)],
    parts: [p.repository, source, p.commitSha, p.job, p.step, p.failureSignature, p.contextDigest] as Part[],
  };
}

/** e.g. failed-check:acme/web:pr-12:aa00bb11cc22:test:Run-npm-test:077fcdd2482487b2:5d41402abc4b:rule_1:<hash> */
export function failedCheckDedupeKey(p: FailedCheckKeyInput): string {
  const { readable, parts } = failedCheckParts(p);
  return key("failed-check", [...readable, slug(p.ruleId)], [...parts, p.ruleId]);
}

/** The failure itself, whichever rule matched it. */
export function failedCheckSubjectKey(p: FailedCheckSubjectInput): string {
  const { readable, parts } = failedCheckParts(p);
  return key("failed-check-subject", readable, parts);
}

export type CheckRerunKeyInput = { originalRunId: string; approvedArtifactDigest: string | null; targetCheck: string };

/** e.g. check-rerun:run_123:sha256-1a2b3c:test:<hash> */
export function checkRerunDedupeKey(p: CheckRerunKeyInput): string {
  const digest = p.approvedArtifactDigest;
  return key(
    "check-rerun",
    [slug(p.originalRunId), digest === null ? "-" : slug(digest, 19), slug(p.targetCheck)],
    [p.originalRunId, digest, p.targetCheck],
  );
}

export type ReleaseKeyInput = { repository: string; version: string; commitSha: string; artifactDigests: readonly string[] };

/** e.g. release:acme/web:1.2.0:6113728f27ae:2-artifacts:<hash>; the digest set is order-free. */
export function releaseDedupeKey(p: ReleaseKeyInput): string {
  const digests = [...new Set(p.artifactDigests)].sort();
  return key("release", [slug(p.repository), slug(p.version), sha(p.commitSha), `${digests.length}-artifacts`], [p.repository, p.version, p.commitSha, digests]);
}

export type FlakyScanKeyInput = { signature: string; queryDigest: string; resultSetDigest: string };

/** e.g. flaky-scan:077fcdd2482487b2:1c2d3e4f5a6b:9a8b7c6d5e4f:<hash> */
export function flakyScanDedupeKey(p: FlakyScanKeyInput): string {
  return key(
    "flaky-scan",
    [slug(p.signature), sha(p.queryDigest), sha(p.resultSetDigest)],
    [p.signature, p.queryDigest, p.resultSetDigest],
  );
}

export type DispatchSubjectInput = {
  kind: "pr-comment" | "label" | "manual";
  repository: string;
  pullRequestNumber: number | null;
  headSha: string;
  /** The command ("fix_failing_check"), "label:<name>", or the manual task kind. */
  command: string;
};
export type DispatchKeyInput = DispatchSubjectInput & { ruleId: string };

function dispatchParts(p: DispatchSubjectInput) {
  const pr = p.pullRequestNumber === null ? null : `pr-${p.pullRequestNumber}`;
  return { readable: [slug(p.repository), pr ?? "-", sha(p.headSha), slug(p.command)], parts: [p.repository, pr, p.headSha, p.command] as Part[] };
}

/** e.g. pr-comment:acme/web:pr-12:aa00bb11cc22:fix_failing_check:rule_2:<hash> */
export function dispatchDedupeKey(p: DispatchKeyInput): string {
  const { readable, parts } = dispatchParts(p);
  return key(p.kind, [...readable, slug(p.ruleId)], [...parts, p.ruleId]);
}

/** The request itself, whichever rule matched it. */
export function dispatchSubjectKey(p: DispatchSubjectInput): string {
  const { readable, parts } = dispatchParts(p);
  return key(`${p.kind}-subject`, readable, parts);
}
