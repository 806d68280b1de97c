import { randomBytes } from "node:crypto";
import { createAppAuth } from "@octokit/auth-app";
import { Octokit } from "@octokit/rest";
import { z } from "zod";
import type { Db } from "@/server/db";
import { transaction } from "@/server/db";
import { AppError } from "@/server/errors";
import { recordAudit } from "../audit";
import type { Sql } from "@/server/db/sql";
import { requireAdmin } from "../access";
import { auditActorOf, type UserActor } from "../actor";
import { buildManifest, manifestPostUrl, type AppManifest } from "./manifest";
import { seal, unseal, type SealingKey } from "./sealed";

// The GitHub App Airlock acts as: created through GitHub's app-manifest flow, or an existing
// app's id, private key and webhook secret. Airlock admins only. Secrets are sealed before they
// are stored and are opened only on the server (tokens, webhook checks); the summary a page shows
// carries none of them.

const STATE_TTL_MS = 60 * 60 * 1000;

export type GithubAppCredentials = { appId: number; privateKey: string; webhookSecret: string };

export type GithubAppSummary =
  | { configured: false }
  | { configured: true; appId: number; slug: string; name: string; htmlUrl: string; ownerLogin: string | null; source: string; installUrl: string; createdAt: Date };

export async function getGithubAppSummary(db: Db): Promise<GithubAppSummary> {
  const app = await db.githubApp.findUnique({ where: { id: "app" } });
  if (!app) return { configured: false };
  return {
    configured: true,
    appId: Number(app.appId),
    slug: app.slug,
    name: app.name,
    htmlUrl: app.htmlUrl,
    ownerLogin: app.ownerLogin,
    source: app.source,
    installUrl: `${app.htmlUrl.replace(/\/+$/, "")}/installations/new`,
    createdAt: app.createdAt,
  };
}

/** The app's credentials, opened with the sealing key (server only: tokens and webhook checks). */
export async function loadGithubAppCredentials(db: Db, key: SealingKey): Promise<GithubAppCredentials | null> {
  const app = await db.githubApp.findUnique({ where: { id: "app" } });
  if (!app) return null;
  return { appId: Number(app.appId), privateKey: unseal(key, app.privateKeySealed), webhookSecret: unseal(key, app.webhookSecretSealed) };
}

export const zStartManifestInput = z.object({
  name: z.string().trim().min(1).max(34),
  /** Create the app under this organisation; absent: the person's own account. */
  organization: z.string().trim().max(39).regex(/^[A-Za-z0-9-]{1,39}$/, "a GitHub organisation login").optional(),
});

/** Step 1: a state (the CSRF guard GitHub hands back) and the manifest the browser posts to GitHub. */
export async function startManifestFlow(opts: { db: Db; actor: UserActor; input: z.infer<typeof zStartManifestInput>; airlockUrl: string; githubUrl: string; now?: Date }): Promise<{ postUrl: string; manifest: AppManifest; state: string }> {
  requireAdmin(opts.actor, "set up the GitHub App");
  const now = opts.now ?? new Date();
  if (await opts.db.githubApp.findUnique({ where: { id: "app" }, select: { id: true } })) {
    throw new AppError("CONFLICT", "A GitHub App is configured already; remove it before creating another.", { reason: "app_exists" });
  }
  const state = randomBytes(24).toString("hex");
  await opts.db.githubManifestState.deleteMany({ where: { expiresAt: { lt: now } } });
  await opts.db.githubManifestState.create({ data: { state, userId: opts.actor.id, expiresAt: new Date(now.getTime() + STATE_TTL_MS) } });
  return {
    state,
    manifest: buildManifest({ airlockUrl: opts.airlockUrl, name: opts.input.name }),
    postUrl: manifestPostUrl({ githubUrl: opts.githubUrl, organization: opts.input.organization ?? null, state }),
  };
}

const zConversion = z.object({
  id: z.number().int().positive(),
  slug: z.string().max(200),
  name: z.string().max(200),
  html_url: z.string().url().max(500),
  owner: z.object({ login: z.string().max(100) }).nullish(),
  client_id: z.string().max(200).nullish(),
  client_secret: z.string().max(500).nullish(),
  webhook_secret: z.string().min(1).max(500),
  pem: z.string().min(1).max(20_000),
});

/**
 * Step 2 (GitHub redirected back with `code` and `state`): the state must be one this admin
 * started and not expired (used once); the code is exchanged for the app's credentials.
 */
export async function completeManifestFlow(opts: { db: Db; actor: UserActor; code: string; state: string; key: SealingKey; apiUrl?: string | null; now?: Date }) {
  requireAdmin(opts.actor, "set up the GitHub App");
  const now = opts.now ?? new Date();
  const { count } = await opts.db.githubManifestState.deleteMany({ where: { state: opts.state, userId: opts.actor.id, expiresAt: { gt: now } } });
  if (count !== 1) throw new AppError("FORBIDDEN", "This GitHub App setup link is unknown, expired or someone else's: start again from Settings → GitHub.", { reason: "bad_state" });
  const octokit = new Octokit({ ...(opts.apiUrl ? { baseUrl: opts.apiUrl } : {}) });
  let data: z.infer<typeof zConversion>;
  try {
    const res = await octokit.request("POST /app-manifests/{code}/conversions", { code: opts.code });
    data = zConversion.parse(res.data);
  } catch (err) {
    const status = (err as { status?: number }).status;
    throw new AppError("BAD_REQUEST", status === 404 ? "GitHub does not know this code (it is valid once, for an hour): start again." : `GitHub refused to convert the manifest: ${status ?? ""} ${(err as Error).message}`.trim(), { reason: "conversion_failed" });
  }
  return storeApp(opts.db, opts.actor, opts.key, {
    appId: data.id,
    slug: data.slug,
    name: data.name,
    htmlUrl: data.html_url,
    ownerLogin: data.owner?.login ?? null,
    clientId: data.client_id ?? null,
    source: "manifest",
    privateKey: data.pem,
    webhookSecret: data.webhook_secret,
    clientSecret: data.client_secret ?? null,
  });
}

export const zExistingAppInput = z.object({
  appId: z.coerce.number().int().positive().max(Number.MAX_SAFE_INTEGER),
  privateKey: z
    .string()
    .trim()
    .max(20_000)
    .regex(/^-----BEGIN (RSA )?PRIVATE KEY-----[\s\S]+-----END (RSA )?PRIVATE KEY-----$/, "a PEM private key (the .pem file GitHub downloads)"),
  webhookSecret: z.string().min(16, "at least 16 characters").max(500),
});

/** An existing app: its credentials are checked against GitHub (GET /app with the app's JWT) before they are stored. */
export async function saveExistingApp(opts: { db: Db; actor: UserActor; input: z.infer<typeof zExistingAppInput>; key: SealingKey; apiUrl?: string | null }) {
  requireAdmin(opts.actor, "set up the GitHub App");
  const { appId, privateKey, webhookSecret } = opts.input;
  const auth = createAppAuth({ appId, privateKey, request: new Octokit({ ...(opts.apiUrl ? { baseUrl: opts.apiUrl } : {}) }).request });
  let app: { slug: string; name: string; html_url: string; owner: { login: string } | null };
  try {
    const octokit = new Octokit({ ...(opts.apiUrl ? { baseUrl: opts.apiUrl } : {}), auth: (await auth({ type: "app" })).token });
    const res = await octokit.request("GET /app");
    app = res.data as typeof app;
  } catch (err) {
    const status = (err as { status?: number }).status;
    throw new AppError("BAD_REQUEST", `GitHub did not accept this app id and private key${status ? ` (${status})` : ""}: ${(err as Error).message}`.slice(0, 500), { reason: "app_rejected" });
  }
  return storeApp(opts.db, opts.actor, opts.key, { appId, slug: app.slug, name: app.name, htmlUrl: app.html_url, ownerLogin: app.owner?.login ?? null, clientId: null, source: "manual", privateKey, webhookSecret, clientSecret: null });
}

type StoredApp = { appId: number; slug: string; name: string; htmlUrl: string; ownerLogin: string | null; clientId: string | null; source: "manifest" | "manual"; privateKey: string; webhookSecret: string; clientSecret: string | null };

async function storeApp(db: Db, actor: UserActor, key: SealingKey, app: StoredApp): Promise<GithubAppSummary> {
  await transaction(db, "storeGithubApp", async (tx) => {
    const data = {
      appId: BigInt(app.appId),
      slug: app.slug,
      name: app.name,
      htmlUrl: app.htmlUrl,
      ownerLogin: app.ownerLogin,
      clientId: app.clientId,
      source: app.source,
      privateKeySealed: seal(key, app.privateKey),
      webhookSecretSealed: seal(key, app.webhookSecret),
      clientSecretSealed: app.clientSecret ? seal(key, app.clientSecret) : null,
      createdById: actor.id,
    };
    await tx.githubApp.upsert({ where: { id: "app" }, create: data, update: data });
    await recordAudit(tx, { actor: auditActorOf(actor), action: "github_app.configure", objectType: "GithubApp", objectId: String(app.appId), detail: { slug: app.slug, source: app.source } });
  });
  forgetWebhookSecrets();
  return getGithubAppSummary(db);
}

export async function removeGithubApp(opts: { db: Db; actor: UserActor }) {
  requireAdmin(opts.actor, "remove the GitHub App");
  await transaction(opts.db, "removeGithubApp", async (tx) => {
    const app = await tx.githubApp.findUnique({ where: { id: "app" } });
    if (!app) throw new AppError("NOT_FOUND", "No GitHub App is configured.");
    await tx.githubApp.delete({ where: { id: "app" } });
    await recordAudit(tx, { actor: auditActorOf(opts.actor), action: "github_app.remove", objectType: "GithubApp", objectId: String(app.appId), detail: { slug: app.slug } });
  });
  forgetWebhookSecrets();
}

// The webhook route checks every delivery against the app's secret: a short cache keeps the
// query and the unsealing off its hot path; a change here drops it at once in this process.
const SECRET_TTL_MS = 10_000;
let secretCache: { at: number; secret: string | null } | null = null;

export function forgetWebhookSecrets(): void {
  secretCache = null;
}

/** The stored app's webhook secret, if an app is configured (cached for a few seconds). */
export async function appWebhookSecret(load: () => Promise<string | null>, now = Date.now()): Promise<string | null> {
  if (secretCache && now - secretCache.at < SECRET_TTL_MS && now >= secretCache.at) return secretCache.secret;
  secretCache = { at: now, secret: await load() };
  return secretCache.secret;
}

/** The webhook route's read of the app's secret, on its own pg pool (see server/db/sql.ts). */
export async function webhookSecretFromSql(sql: Sql, key: SealingKey): Promise<string | null> {
  const { rows } = await sql.query<{ webhookSecretSealed: string }>(`SELECT "webhookSecretSealed" FROM "GithubApp" WHERE "id" = 'app'`, []);
  return rows[0] ? unseal(key, rows[0].webhookSecretSealed) : null;
}
