// The secret values redaction must remove from everything ingest stores: the values of granted
// secrets (SecretGrant names; values from the server environment, `AIRLOCK_SECRET_<NAME>`) and
// Airlock's own credentials, the GitHub App's webhook secret included (sealed in the database).
// Values live only in memory; names go into redaction reports.
import type { Db } from "@/server/db";
import { prismaSql, type Sql } from "@/server/db/sql";
import type { KnownSecret } from "@/server/domain/context/redaction/redact";
import { env, grantedValue } from "@/server/env";
import { appWebhookSecret, webhookSecretFromSql } from "@/server/domain/github-app/app-service";
import { sealingKey } from "@/server/domain/github-app/key";
import { logError } from "@/server/observability/log";

/** Airlock's own credentials: a webhook body or CI log that echoes one must not keep it. */
const OWN_SECRETS = ["GITHUB_WEBHOOK_SECRET", "GITHUB_TOKEN", "GITHUB_CLIENT_SECRET", "BETTER_AUTH_SECRET"] as const;

// Grants change rarely and every delivery needs the list: a short cache keeps a query off the
// webhook's hot path, and a new grant is honoured within seconds.
const TTL_MS = 5_000;
let cache: { at: number; names: string[] } | null = null;

/** The known secrets, from a Prisma client (or transaction) or the webhook route's pg pool. */
export async function loadKnownSecrets(source: Db | Sql, now: Date = new Date()): Promise<KnownSecret[]> {
  if (cache === null || now.getTime() - cache.at > TTL_MS || now.getTime() < cache.at) {
    const { rows } = await sql(source).query<{ secretName: string }>(`SELECT DISTINCT "secretName" FROM "SecretGrant"`, []);
    cache = { at: now.getTime(), names: rows.map((g) => g.secretName) };
  }
  return knownSecretsFor(cache.names, await githubAppSecrets(sql(source)));
}

const sql = (source: Db | Sql): Sql => ("$queryRawUnsafe" in source ? prismaSql(source) : source);

/** The app's webhook secret (cached like the webhook route's copy), or none when no app is set up. */
async function githubAppSecrets(source: Sql): Promise<KnownSecret[]> {
  try {
    const value = await appWebhookSecret(() => webhookSecretFromSql(source, sealingKey()));
    return value ? [{ name: "GITHUB_APP_WEBHOOK_SECRET", value }] : [];
  } catch (err) {
    // Unreadable (another sealing key): no delivery can be verified with it either.
    logError("read the GitHub App's webhook secret for redaction", err);
    return [];
  }
}

/** Drop the cached grant names (tests that add grants mid-file; the grants UI after a save). */
export function forgetKnownSecrets(): void {
  cache = null;
}

export function knownSecretsFor(grantNames: readonly string[], own: readonly KnownSecret[] = []): KnownSecret[] {
  const out = new Map<string, KnownSecret>(own.map((s) => [s.name, s]));
  for (const name of OWN_SECRETS) {
    const value = env[name];
    if (value) out.set(name, { name, value });
  }
  for (const name of grantNames) {
    const value = grantedValue("secret", name);
    if (value !== undefined && !out.has(name)) out.set(name, { name, value });
  }
  return [...out.values()];
}
