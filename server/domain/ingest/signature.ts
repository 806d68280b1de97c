// GitHub's webhook signature: `X-Hub-Signature-256: sha256=<hex HMAC-SHA256 of the raw body>`.
// Computed over the exact bytes received (not a decoded string), so a body that is not valid
// UTF-8, or that a proxy re-encoded, fails instead of verifying against something else.
// (`@octokit/webhooks-methods`' verify takes a string, so it is not used.)
import { createHmac, timingSafeEqual } from "node:crypto";

const PREFIX = "sha256=";
const HEX_LENGTH = 64;

/** The header value GitHub would send for `body` signed with `secret`. */
export function signBody(secret: string, body: string | Uint8Array): string {
  return PREFIX + createHmac("sha256", secret).update(body).digest("hex");
}

export type SignatureCheck = { ok: true } | { ok: false; reason: string };

/**
 * Constant-time check of `header` against the body. Only `sha256=` counts: `sha1=` (the legacy
 * X-Hub-Signature) is refused rather than downgraded to.
 */
export function verifySignature(secret: string, body: Uint8Array, header: string | null): SignatureCheck {
  if (header === null || header.trim() === "") return { ok: false, reason: "missing X-Hub-Signature-256" };
  const value = header.trim();
  if (!value.startsWith(PREFIX)) return { ok: false, reason: "X-Hub-Signature-256 must be sha256=<hex>" };
  const given = value.slice(PREFIX.length).toLowerCase();
  if (given.length !== HEX_LENGTH || !/^[0-9a-f]+$/.test(given)) {
    return { ok: false, reason: "X-Hub-Signature-256 is not a sha256 hex digest" };
  }
  const expected = createHmac("sha256", secret).update(body).digest();
  const equal = timingSafeEqual(Buffer.from(given, "hex"), expected);
  return equal ? { ok: true } : { ok: false, reason: "X-Hub-Signature-256 does not match the body" };
}
