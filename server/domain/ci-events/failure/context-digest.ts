// The context digest of a failed check's dedupe key (the spec: "deduped by source object, commit
// SHA, failed job/step, failure signature, context digest, and rule"): what the run would be
// given about the failure, with what churns between two reports of the same failure taken out.
// It covers the failing log excerpt, each line normalised as for the failure signature (times,
// ids, temp paths, ports gone), and the digests of the artifacts the report carried. It is not
// the run's own contextDigest, which also covers the delivery id, similar runs and the stack
// version and so would never repeat: a redelivery, or a rerun that fails with the same output,
// must get the same key. A failure that fails differently at the same commit (other output, other
// artifacts) gets a new one. Unknown context (no log, no artifacts) is its own value.
import { createHash } from "node:crypto";
import { normaliseForSignature, splitLines } from "./normalise";

export const CONTEXT_DIGEST_HEX_LENGTH = 16;

export function failureContextDigest(input: { logExcerpt: string | null; artifactDigests: readonly string[] }): string {
  const lines = input.logExcerpt ? splitLines(input.logExcerpt).map(normaliseForSignature).filter((l) => l !== "") : [];
  const digests = [...new Set(input.artifactDigests)].sort();
  return createHash("sha256")
    .update(JSON.stringify(["airlock-failure-context", 1, lines, digests]))
    .digest("hex")
    .slice(0, CONTEXT_DIGEST_HEX_LENGTH);
}
