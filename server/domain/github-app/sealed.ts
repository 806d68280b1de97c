import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";
import { chmodSync, mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";

// Secrets at rest (the GitHub App's private key, webhook and client secrets): AES-256-GCM with a
// key that lives outside the database, so a database dump alone reveals nothing. The key is
// AIRLOCK_SECRET_KEY (32 bytes, base64) when set, else `<data dir>/secret.key`, created once with
// mode 0600. Sealed text: `v1:<iv>:<tag>:<ciphertext>` (base64url).

export type SealingKey = Buffer;

const KEY_BYTES = 32;

export function parseSealingKey(text: string): SealingKey {
  const key = Buffer.from(text.trim(), "base64");
  if (key.length !== KEY_BYTES) throw new Error(`the sealing key must be ${KEY_BYTES} bytes in base64 (got ${key.length})`);
  return key;
}

/** AIRLOCK_SECRET_KEY, or the data folder's key file (created on first use). */
export function loadSealingKey(opts: { envKey?: string | null; dataDir: string }): SealingKey {
  if (opts.envKey) return parseSealingKey(opts.envKey);
  const file = join(opts.dataDir, "secret.key");
  try {
    const mode = statSync(file).mode & 0o777;
    if (mode & 0o077) chmodSync(file, 0o600);
    return parseSealingKey(readFileSync(file, "utf8"));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
  }
  mkdirSync(dirname(file), { recursive: true });
  const key = randomBytes(KEY_BYTES);
  // "wx": two processes starting at once must not each write a different key.
  try {
    writeFileSync(file, key.toString("base64"), { mode: 0o600, flag: "wx" });
    return key;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
    return parseSealingKey(readFileSync(file, "utf8"));
  }
}

export function seal(key: SealingKey, plain: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv("aes-256-gcm", key, iv);
  const body = Buffer.concat([cipher.update(plain, "utf8"), cipher.final()]);
  return ["v1", iv.toString("base64url"), cipher.getAuthTag().toString("base64url"), body.toString("base64url")].join(":");
}

export function unseal(key: SealingKey, sealed: string): string {
  const [version, iv, tag, body] = sealed.split(":");
  if (version !== "v1" || !iv || !tag || body === undefined) throw new Error("not a sealed value");
  const decipher = createDecipheriv("aes-256-gcm", key, Buffer.from(iv, "base64url"));
  decipher.setAuthTag(Buffer.from(tag, "base64url"));
  try {
    return Buffer.concat([decipher.update(Buffer.from(body, "base64url")), decipher.final()]).toString("utf8");
  } catch {
    throw new Error("a sealed value does not open with this key (AIRLOCK_SECRET_KEY or the data folder's secret.key changed)");
  }
}
