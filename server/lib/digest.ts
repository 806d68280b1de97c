import { createHash } from "node:crypto";
import { canonicalJson } from "./canonical-json";

// Every digest Airlock stores (context bundles, prompts, stack snapshots,
// artifacts, policies) is `sha256:<hex>`: self-describing, one format.

export { canonicalJson };

export const sha256 = (data: string | Buffer | Uint8Array) => createHash("sha256").update(data).digest("hex");

/** `sha256:<hex>` of raw content (an artifact, a prompt). */
export const contentDigest = (data: string | Buffer | Uint8Array) => `sha256:${sha256(data)}`;

/** `sha256:<hex>` of a value's canonical JSON. */
export const digestOf = (value: unknown) => contentDigest(canonicalJson(value));
