// The GitHub App against the GitHub API test double: the manifest flow and an existing app's
// credentials (sealed at rest), installation events registering and disabling repositories (a
// stranger's and a replayed delivery included), repository-scoped installation tokens (used,
// reused, refreshed when expired) and rate limits (403/429 with retry-after or a reset time).
import { randomBytes } from "node:crypto";
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SessionUser } from "@/server/auth/roles";
import { getDb } from "@/server/db";
import { evaluateDelivery } from "@/server/domain/evaluation/evaluate";
import { receiveGithubWebhook } from "@/server/domain/ingest/delivery/receive-github";
import { prismaSql } from "@/server/db/sql";
import { failedWorkflowJob, installationEvent, installationRepositoriesEvent, signedRequest, type Delivery } from "@/server/domain/ingest/fixtures/deliveries";
import { forgeResolver } from "@/server/domain/writebacks/forges";
import { githubClient, installationToken } from "@/server/forges/github/client";
import { startFakeGithub, type FakeGithub } from "@/server/forges/github/testing/fake-github";
import type { FakeApp } from "@/server/forges/github/testing/fake-github-apps";
import { createUser } from "@/server/testing/factories";
import { completeManifestFlow, forgetWebhookSecrets, getGithubAppSummary, loadGithubAppCredentials, removeGithubApp, saveExistingApp, startManifestFlow } from "./app-service";
import { sealingKey } from "./key";
import { setRepositoryEnabled } from "@/server/domain/repositories/manage-service";
import { processInstallationDelivery } from "./installation-delivery";
import { loadSealingKey, type SealingKey } from "./sealed";

const db = getDb();
let fake: FakeGithub;
let key: SealingKey;
let admin: SessionUser;
let viewer: SessionUser;
let n = 0;

beforeAll(async () => {
  fake = await startFakeGithub();
  key = loadSealingKey({ dataDir: await mkdtemp(join(tmpdir(), "airlock-key-")) });
  [admin, viewer] = await Promise.all([createUser({ isAdmin: true }), createUser()]);
});
afterAll(() => fake.close());

const sha = () => randomBytes(20).toString("hex");

async function deliver(delivery: Delivery, opts: { secret: string; deliveryId?: string }) {
  const deliveryId = opts.deliveryId ?? `gh-app-${++n}-${randomBytes(4).toString("hex")}`;
  const res = await receiveGithubWebhook({ sql: prismaSql(db), request: signedRequest("http://localhost/api/webhooks/github", opts.secret, deliveryId, delivery), secret: undefined, appSecret: opts.secret, maxBytes: 5_000_000 });
  return { deliveryId, status: res.status, body: (await res.json()) as Record<string, unknown> };
}

const processDelivery = (deliveryId: string) => processInstallationDelivery({ db, deliveryId, key, githubUrl: "https://github.example.test", apiUrl: fake.url });

async function withApp(): Promise<FakeApp> {
  await db.githubApp.deleteMany();
  const app = fake.apps.createApp({ name: `Airlock ${++n}`, owner: "acme" });
  await saveExistingApp({ db, actor: admin, input: { appId: app.id, privateKey: app.pem, webhookSecret: app.webhookSecret }, key, apiUrl: fake.url });
  return app;
}

describe("setting up the app", () => {
  it("creates the app through the manifest flow and stores its secrets sealed", async () => {
    await db.githubApp.deleteMany();
    const started = await startManifestFlow({ db, actor: admin, input: { name: "Airlock Test" }, airlockUrl: "http://127.0.0.1:3000", githubUrl: "https://github.example.test" });
    expect(started.postUrl).toBe(`https://github.example.test/settings/apps/new?state=${started.state}`);
    expect(started.manifest.default_permissions).toMatchObject({ metadata: "read", checks: "write", contents: "write" });
    expect(started.manifest.hook_attributes.url).toBe("http://127.0.0.1:3000/api/webhooks/github");

    // The person clicks "Create GitHub App"; GitHub redirects back with a one-time code.
    const code = fake.apps.manifestCode(started.manifest, "acme");
    await expect(completeManifestFlow({ db, actor: admin, code, state: "forged-state", key, apiUrl: fake.url })).rejects.toMatchObject({ code: "FORBIDDEN", reason: "bad_state" });
    const summary = await completeManifestFlow({ db, actor: admin, code, state: started.state, key, apiUrl: fake.url });
    expect(summary).toMatchObject({ configured: true, name: "Airlock Test", source: "manifest" });
    expect(JSON.stringify(summary)).not.toMatch(/PRIVATE KEY|secret/i);

    const row = await db.githubApp.findUniqueOrThrow({ where: { id: "app" } });
    const created = fake.apps.app(Number(row.appId)) as FakeApp;
    expect(row.privateKeySealed).not.toContain("PRIVATE KEY");
    expect(row.webhookSecretSealed).not.toContain(created.webhookSecret);
    const opened = await loadGithubAppCredentials(db, key);
    expect(opened).toEqual({ appId: created.id, privateKey: created.pem, webhookSecret: created.webhookSecret });
    // Another key opens nothing.
    const otherKey = loadSealingKey({ dataDir: await mkdtemp(join(tmpdir(), "airlock-key-")) });
    await expect(loadGithubAppCredentials(db, otherKey)).rejects.toThrow(/does not open/);

    // The state was used once: the same redirect cannot be replayed.
    await db.githubApp.deleteMany();
    await expect(completeManifestFlow({ db, actor: admin, code, state: started.state, key, apiUrl: fake.url })).rejects.toMatchObject({ reason: "bad_state" });
  });

  it("refuses a code GitHub does not know, and non-admins", async () => {
    await db.githubApp.deleteMany();
    const started = await startManifestFlow({ db, actor: admin, input: { name: "Airlock" }, airlockUrl: "http://127.0.0.1:3000", githubUrl: "https://github.example.test" });
    await expect(completeManifestFlow({ db, actor: admin, code: "made-up", state: started.state, key, apiUrl: fake.url })).rejects.toMatchObject({ reason: "conversion_failed" });
    await expect(startManifestFlow({ db, actor: viewer, input: { name: "x" }, airlockUrl: "http://x", githubUrl: "https://github.example.test" })).rejects.toMatchObject({ code: "FORBIDDEN" });
    const app = fake.apps.createApp({ name: "Existing", owner: "acme" });
    await expect(saveExistingApp({ db, actor: viewer, input: { appId: app.id, privateKey: app.pem, webhookSecret: app.webhookSecret }, key, apiUrl: fake.url })).rejects.toMatchObject({ code: "FORBIDDEN" });
  });

  it("checks an existing app's id and key against GitHub before storing them", async () => {
    await db.githubApp.deleteMany();
    const app = fake.apps.createApp({ name: "Existing", owner: "acme" });
    const other = fake.apps.createApp({ name: "Other", owner: "acme" });
    await expect(saveExistingApp({ db, actor: admin, input: { appId: app.id, privateKey: other.pem, webhookSecret: app.webhookSecret }, key, apiUrl: fake.url })).rejects.toMatchObject({ reason: "app_rejected" });
    expect(await getGithubAppSummary(db)).toEqual({ configured: false });
    const saved = await saveExistingApp({ db, actor: admin, input: { appId: app.id, privateKey: app.pem, webhookSecret: app.webhookSecret }, key, apiUrl: fake.url });
    expect(saved).toMatchObject({ configured: true, appId: app.id, slug: "existing", source: "manual" });
    await removeGithubApp({ db, actor: admin });
    expect(await getGithubAppSummary(db)).toEqual({ configured: false });
  });
});

describe("installation events", () => {
  it("register the installed repositories with GitHub's default branch; a replay changes nothing", async () => {
    const app = await withApp();
    const owner = `org${++n}`;
    fake.createRepository(`${owner}/widgets`, { branch: "trunk", files: { "README.md": "hi" } });
    const installation = fake.apps.install({ appId: app.id, account: owner, repositories: [`${owner}/widgets`] });
    const event = installationEvent({ action: "created", installationId: installation.id, appId: app.id, account: owner, repositories: [{ id: 5_000_000_000 + n, fullName: `${owner}/widgets` }] });

    // Signed with another secret: refused before anything is stored.
    const wrong = await receiveGithubWebhook({ sql: prismaSql(db), request: signedRequest("http://l/api/webhooks/github", "forged-secret-0000", "gh-forged", event), secret: undefined, appSecret: app.webhookSecret, maxBytes: 5_000_000 });
    expect(wrong.status).toBe(401);
    expect(await db.webhookDelivery.count({ where: { deliveryId: "gh-forged" } })).toBe(0);

    const first = await deliver(event, { secret: app.webhookSecret });
    expect(first.body).toMatchObject({ status: "accepted" });
    const result = await processDelivery(first.deliveryId);
    expect(result).toMatchObject({ outcome: "processed", registered: [`${owner}/widgets`] });
    const repo = await db.repository.findUniqueOrThrow({ where: { fullName: `${owner}/widgets` } });
    expect(repo).toMatchObject({ forge: "github", defaultBranch: "trunk", visibility: "private", githubInstallationId: BigInt(installation.id), disabledAt: null });
    // The default branch was read with a token scoped to that one repository.
    expect(fake.apps.issued.at(-1)?.repositories).toEqual([`${owner}/widgets`]);
    expect(await db.auditEntry.count({ where: { objectId: repo.id, action: "repository.register" } })).toBe(1);

    // GitHub redelivers (same X-GitHub-Delivery): recorded once, applied once.
    const replay = await deliver(event, { secret: app.webhookSecret, deliveryId: first.deliveryId });
    expect(replay).toMatchObject({ status: 200, body: { status: "duplicate" } });
    expect(await processDelivery(first.deliveryId)).toBe("skipped");
    // A fresh delivery of the same installation: the repository is updated, not duplicated.
    const again = await deliver(event, { secret: app.webhookSecret });
    expect(await processDelivery(again.deliveryId)).toMatchObject({ updated: [`${owner}/widgets`], registered: [] });
    expect(await db.repository.count({ where: { fullName: { startsWith: `${owner}/` } } })).toBe(1);
  });

  it("refuse a stranger's installation naming a repository they do not own, and another app's installation", async () => {
    const app = await withApp();
    const victim = `victim${++n}`;
    const existing = await db.repository.create({ data: { fullName: `${victim}/payments`, forge: "github", cloneUrl: "x", githubRepoId: BigInt(6_000_000 + n) } });
    // Mallory installs the app on her own account but lists the victim's repository.
    const stranger = installationEvent({ action: "created", installationId: 990_000 + n, appId: app.id, account: "mallory", repositories: [{ id: 6_000_000 + n, fullName: `${victim}/payments` }, { id: 7_000_000 + n, fullName: `${victim}/new-one` }] });
    const d = await deliver(stranger, { secret: app.webhookSecret });
    const result = await processDelivery(d.deliveryId);
    expect(result).toMatchObject({ outcome: "ignored" });
    expect((result as { refused: string[] }).refused).toEqual([`${victim}/payments: not owned by mallory`, `${victim}/new-one: not owned by mallory`]);
    expect(await db.repository.findUniqueOrThrow({ where: { id: existing.id } })).toMatchObject({ githubInstallationId: null, disabledAt: null });
    expect(await db.repository.count({ where: { fullName: `${victim}/new-one` } })).toBe(0);

    // The right owner, but a repository id other than the one Airlock knows by that name.
    const renamedOver = installationEvent({ action: "created", installationId: 991_000 + n, appId: app.id, account: victim, repositories: [{ id: 8_000_000 + n, fullName: `${victim}/payments` }] });
    const r2 = await processDelivery((await deliver(renamedOver, { secret: app.webhookSecret })).deliveryId);
    expect((r2 as { refused: string[] }).refused[0]).toMatch(/knows another GitHub repository/);

    // Another app's installation (signed with our secret, but not ours to act on).
    const foreign = installationEvent({ action: "created", installationId: 992_000 + n, appId: app.id + 1, account: victim, repositories: [{ id: 9_000_000 + n, fullName: `${victim}/other` }] });
    const r3 = await processDelivery((await deliver(foreign, { secret: app.webhookSecret })).deliveryId);
    expect(r3).toMatchObject({ outcome: "ignored", detail: expect.stringMatching(/not Airlock's app/) });
    const stored = await db.webhookDelivery.findUniqueOrThrow({ where: { deliveryId: d.deliveryId } });
    expect(stored).toMatchObject({ outcome: "ignored", detail: expect.stringMatching(/not owned by mallory/) });
  });

  it("a payload that echoes the app's webhook secret is stored with the secret redacted", async () => {
    // Sealed with this installation's own key, as the settings page does: redaction reads it back.
    await db.githubApp.deleteMany();
    const app = fake.apps.createApp({ name: `Airlock ${++n}`, owner: "acme" });
    await saveExistingApp({ db, actor: admin, input: { appId: app.id, privateKey: app.pem, webhookSecret: app.webhookSecret }, key: sealingKey(), apiUrl: fake.url });
    forgetWebhookSecrets();
    const echo = failedWorkflowJob({ repo: "acme/echo", runId: 1, jobId: 2, jobName: `deploy with ${app.webhookSecret}`, step: "deploy", headSha: sha(), headBranch: "main" });
    const d = await deliver(echo, { secret: app.webhookSecret });
    expect(d.status).toBeLessThan(300);
    const stored = await db.webhookDelivery.findUniqueOrThrow({ where: { deliveryId: d.deliveryId } });
    expect(JSON.stringify(stored)).not.toContain(app.webhookSecret);
    expect(JSON.stringify(stored.payload)).toContain("deploy with");
    forgetWebhookSecrets();
  });

  it("a hostile payload is rejected with the field named and changes nothing", async () => {
    const app = await withApp();
    const bad = { event: "installation", payload: { action: "created", installation: { id: "1; DROP TABLE", app_id: app.id, account: { login: "x" } }, repositories: [{ id: 1, full_name: "../../etc", private: true }], sender: { login: "x" } } };
    const d = await deliver(bad, { secret: app.webhookSecret });
    const result = await processDelivery(d.deliveryId);
    expect(result).toMatchObject({ outcome: "rejected", detail: expect.stringMatching(/installation\.id/) });
    expect(await db.repository.count({ where: { fullName: "../../etc" } })).toBe(0);
  });

  it("removing a repository or uninstalling disables it, and its deliveries are ignored", async () => {
    const app = await withApp();
    const owner = `org${++n}`;
    const repos = [{ id: 10_000_000 + n, fullName: `${owner}/a` }, { id: 10_100_000 + n, fullName: `${owner}/b` }];
    const installationId = 993_000 + n;
    await processDelivery((await deliver(installationEvent({ action: "created", installationId, appId: app.id, account: owner, repositories: repos }), { secret: app.webhookSecret })).deliveryId);
    const removed = await processDelivery((await deliver(installationRepositoriesEvent({ action: "removed", installationId, appId: app.id, account: owner, removed: [repos[0]!] }), { secret: app.webhookSecret })).deliveryId);
    expect(removed).toMatchObject({ disabled: [`${owner}/a`] });
    const a = await db.repository.findUniqueOrThrow({ where: { fullName: `${owner}/a` } });
    expect(a.disabledReason).toMatch(/removed from the GitHub App's installation/);

    const failure = failedWorkflowJob({ repo: `${owner}/a`, runId: 1, jobId: 2, jobName: "test", step: "npm test", headSha: sha(), headBranch: "main" });
    const fd = await deliver(failure, { secret: app.webhookSecret });
    expect(await evaluateDelivery({ db, deliveryId: fd.deliveryId })).toMatchObject({ outcome: "ignored", detail: expect.stringMatching(/is disabled/) });

    const deleted = await processDelivery((await deliver(installationEvent({ action: "deleted", installationId, appId: app.id, account: owner }), { secret: app.webhookSecret })).deliveryId);
    expect(deleted).toMatchObject({ disabled: [`${owner}/b`] });
    // Added back: enabled again.
    const added = await processDelivery((await deliver(installationRepositoriesEvent({ action: "added", installationId, appId: app.id, account: owner, added: [repos[0]!] }), { secret: app.webhookSecret })).deliveryId);
    expect(added).toMatchObject({ updated: [`${owner}/a`] });
    expect((await db.repository.findUniqueOrThrow({ where: { fullName: `${owner}/a` } })).disabledAt).toBeNull();
  });

  it("never enables a repository an admin disabled: the installation updates it, and it stays disabled", async () => {
    const app = await withApp();
    const owner = `org${++n}`;
    const repo = { id: 11_000_000 + n, fullName: `${owner}/held` };
    const installationId = 994_000 + n;
    await processDelivery((await deliver(installationEvent({ action: "created", installationId, appId: app.id, account: owner, repositories: [repo] }), { secret: app.webhookSecret })).deliveryId);
    const row = await db.repository.findUniqueOrThrow({ where: { fullName: repo.fullName } });
    await setRepositoryEnabled({ db, actor: admin, input: { repositoryId: row.id, enabled: false, reason: "security review" } });
    // Removed and added back, then a fresh installation event: each leaves the admin's flag alone.
    await processDelivery((await deliver(installationRepositoriesEvent({ action: "removed", installationId, appId: app.id, account: owner, removed: [repo] }), { secret: app.webhookSecret })).deliveryId);
    const added = await processDelivery((await deliver(installationRepositoriesEvent({ action: "added", installationId, appId: app.id, account: owner, added: [repo] }), { secret: app.webhookSecret })).deliveryId);
    expect(added).toMatchObject({ updated: [`${repo.fullName} (stays disabled: an admin disabled it)`] });
    await processDelivery((await deliver(installationEvent({ action: "created", installationId, appId: app.id, account: owner, repositories: [repo] }), { secret: app.webhookSecret })).deliveryId);
    expect(await db.repository.findUniqueOrThrow({ where: { id: row.id } })).toMatchObject({ disabledBy: "admin", disabledReason: "security review", disabledAt: expect.any(Date) });
  });
});

describe("installation tokens and rate limits", () => {
  it("write-backs to an installed repository use its installation token; without one, the personal token or a clear refusal", async () => {
    const app = await withApp();
    const owner = `wb${++n}`;
    fake.createRepository(`${owner}/svc`, { branch: "main", files: { a: "1" } });
    const installation = fake.apps.install({ appId: app.id, account: owner, repositories: [`${owner}/svc`] });
    await processDelivery((await deliver(installationEvent({ action: "created", installationId: installation.id, appId: app.id, account: owner, repositories: [{ id: 20_000_000 + n, fullName: `${owner}/svc` }] }), { secret: app.webhookSecret })).deliveryId);
    const creds = await loadGithubAppCredentials(db, key);
    const forge = forgeResolver(db, { dataDir: "/nonexistent", ciTimeoutMs: 1000, githubApp: creds, githubApiUrl: fake.url })({ fullName: `${owner}/svc`, forge: "github" });
    const head = await forge.branchHead(`${owner}/svc`, "main");
    expect(head).toBe(fake.branchHead(`${owner}/svc`, "main"));
    const used = fake.requests.filter((r) => r.path === `/repos/${owner}/svc/git/ref/heads%2Fmain`).at(-1)?.authorization;
    expect(used).toMatch(/^token ghs_/);
    // A GitHub repository no installation covers, and no personal token.
    await db.repository.create({ data: { fullName: `${owner}/pat-only`, forge: "github", cloneUrl: "x" } });
    await expect(forge.branchHead(`${owner}/pat-only`, "main")).rejects.toThrow(/No GitHub App installation covers/);
  });

  it("mints a token scoped to the repository, reuses it, and mints another once it expires", async () => {
    const app = fake.apps.createApp({ name: "Tokens", owner: "acme" });
    const owner = `tok${++n}`;
    fake.createRepository(`${owner}/one`, { branch: "main", files: { a: "1" } });
    fake.createRepository(`${owner}/two`, { branch: "main", files: { a: "2" } });
    const installation = fake.apps.install({ appId: app.id, account: owner, repositories: [`${owner}/one`, `${owner}/two`] });
    const creds = { appId: app.id, privateKey: app.pem };
    const clock = () => fake.apps.now();
    const client = githubClient({ auth: { kind: "installation", app: creds, installationId: installation.id, repository: `${owner}/one` }, baseUrl: fake.url, now: clock });
    const before = fake.apps.issued.length;
    await client.rest.repos.get({ owner, repo: "one" });
    await client.rest.repos.get({ owner, repo: "one" });
    const minted = fake.apps.issued.slice(before);
    expect(minted).toHaveLength(1);
    expect(minted[0]?.repositories).toEqual([`${owner}/one`]);
    // The token is for that repository only: GitHub answers 404 for the other.
    await expect(client.rest.repos.get({ owner, repo: "two" })).rejects.toMatchObject({ status: 404 });

    // An hour later the token has expired: the next call mints a new one and succeeds.
    fake.apps.advance(61 * 60 * 1000);
    const { data } = await client.rest.repos.get({ owner, repo: "one" });
    expect(data.default_branch).toBe("main");
    const afterExpiry = fake.apps.issued.slice(before);
    expect(afterExpiry).toHaveLength(2);
    expect(afterExpiry[1]?.token).not.toBe(afterExpiry[0]?.token);
    // The expired one really is refused.
    await expect(githubClient({ auth: { kind: "token", token: afterExpiry[0]!.token }, baseUrl: fake.url }).rest.repos.get({ owner, repo: "one" })).rejects.toMatchObject({ status: 401 });
    // Five minutes before expiry counts as expired (a long call must not outlive its token).
    fake.apps.advance(56 * 60 * 1000);
    await installationToken({ app: creds, installationId: installation.id, repository: `${owner}/one`, baseUrl: fake.url, now: clock });
    expect(fake.apps.issued.slice(before)).toHaveLength(3);
    // A repository the installation does not include: GitHub's 422, no token.
    await expect(installationToken({ app: creds, installationId: installation.id, repository: `${owner}/three`, baseUrl: fake.url, now: clock })).rejects.toMatchObject({ status: 422 });
  });

  it("waits out a secondary rate limit (429, retry-after) and a primary one (403, reset), within its bound", async () => {
    const owner = `rl${++n}`;
    fake.createRepository(`${owner}/r`, { branch: "main", files: { a: "1" } });
    const client = githubClient({ auth: { kind: "token", token: fake.token }, baseUrl: fake.url });
    const count = () => fake.requests.filter((r) => r.path === `/repos/${owner}/r`).length;

    fake.rateLimit({ status: 429, kind: "secondary", retryAfterSeconds: 1, times: 1 });
    let t = Date.now();
    await client.rest.repos.get({ owner, repo: "r" });
    expect(Date.now() - t).toBeGreaterThanOrEqual(950);
    expect(count()).toBe(2);

    fake.rateLimit({ status: 403, kind: "primary", retryAfterSeconds: 1, times: 1 });
    t = Date.now();
    await client.rest.repos.get({ owner, repo: "r" });
    expect(Date.now() - t).toBeGreaterThanOrEqual(900);
    expect(count()).toBe(4);

    // A wait longer than Airlock sits through fails with GitHub's answer, at once.
    fake.rateLimit({ status: 403, kind: "secondary", retryAfterSeconds: 3600, times: 1 });
    t = Date.now();
    await expect(client.rest.repos.get({ owner, repo: "r" })).rejects.toMatchObject({ status: 403 });
    expect(Date.now() - t).toBeLessThan(2000);
    // Retries are bounded: a limit that never lifts fails after maxRetries.
    fake.rateLimit({ status: 429, kind: "secondary", retryAfterSeconds: 1, times: 10 });
    await expect(client.rest.repos.get({ owner, repo: "r" })).rejects.toMatchObject({ status: 429 });
    fake.rateLimit({ status: 429, kind: "secondary", retryAfterSeconds: 1, times: 0 });
  });
});
