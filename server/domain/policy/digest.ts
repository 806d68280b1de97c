import { canonicalJson, contentDigest } from "@/server/lib/digest";
import type { PolicyDefinition } from "./model";

// A definition's digest names exactly what was evaluated, so a stored decision can say which
// rules produced it. Keys are sorted first: the same definition always hashes the same, however
// the JSON was written.

export { canonicalJson };

const digests = new WeakMap<PolicyDefinition, string>();

/** "sha256:<hex>" of the canonical JSON of a definition. */
export function policyDigest(policy: PolicyDefinition): string {
  const cached = digests.get(policy);
  if (cached) return cached;
  const digest = contentDigest(canonicalJson(policy));
  digests.set(policy, digest);
  return digest;
}
