import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fetchRequestHandler } from "@trpc/server/adapters/fetch";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SessionUser } from "@/server/auth/roles";
import { getDb } from "@/server/db";
import { listApiTokens } from "@/server/domain/api-tokens/tokens";
import { listApprovals } from "@/server/domain/approvals/queue";
import { createPatchApproval, createPatchRepository } from "@/server/domain/approvals/test-fixtures";
import { getGithubAppSummary, saveExistingApp } from "@/server/domain/github-app/app-service";
import { loadSealingKey } from "@/server/domain/github-app/sealed";
import { getPoolSettings } from "@/server/domain/pools/pools-presenter";
import { getStack } from "@/server/domain/stacks/stacks-presenter";
import { listUsers } from "@/server/domain/users/accounts";
import { startFakeGithub, type FakeGithub } from "@/server/forges/github/testing/fake-github";
import { procedureOutput } from "@/server/rest/schemas";
import { makeStack, uid } from "@/server/testing/config-factories";
import { callerFor, createRepository, createUser } from "@/server/testing/factories";
import { adminProcedure, createCallerFactory, createTRPCContext, protectedProcedure, router } from "../init";
import { appRouter } from "../root";

// A secret a presenter hands back by mistake (a token's hash, a password hash, the app's sealed
// key, a secret's value) never reaches the browser: each procedure's own output schema strips
// it. `leaky` is the real procedure's twin whose resolver makes that mistake with the real
// answer and the real secret read from PostgreSQL; the real procedures' answers hold exactly
// what their schemas declare.

const db = getDb();
let admin: SessionUser;
let fake: FakeGithub;

beforeAll(async () => {
  admin = await createUser({ isAdmin: true });
  fake = await startFakeGithub();
});
afterAll(() => fake.close());

function outputOf(path: string) {
  const schema = procedureOutput(path);
  if (!schema) throw new Error(`${path} declares no output`);
  return schema;
}

/** Calls a twin of `path` that answers `answer()` through `path`'s own output schema, over HTTP-shaped JSON. */
async function throughOutput(path: string, user: SessionUser, answer: () => Promise<unknown>) {
  const procedure = ["apiTokens.", "approvals.", "stacks."].some((p) => path.startsWith(p)) ? protectedProcedure : adminProcedure;
  const twin = router({ leak: procedure.output(outputOf(path)).query(answer) });
  const data = await createCallerFactory(twin)(createTRPCContext({ user })).leak();
  return JSON.stringify(data);
}

describe("declared outputs strip what a presenter leaks", () => {
  it("an API token's hash", async () => {
    const owner = await createUser();
    const repo = await createRepository({ members: [[owner, "maintainer"]] });
    const created = await callerFor(owner).apiTokens.create({ name: "ci", kind: "personal", role: "viewer", repositoryIds: [repo.id] });
    const { tokenHash } = await db.apiToken.findUniqueOrThrow({ where: { id: created.id }, select: { tokenHash: true } });
    const wire = await throughOutput("apiTokens.list", owner, async () => (await listApiTokens({ db, owner })).map((t) => ({ ...t, tokenHash, owner: { ...t.owner, tokenHash } })));
    expect(wire).toContain(created.id);
    expect(wire).not.toContain(tokenHash);
    expect(wire).not.toContain("tokenHash");
    // The real answer: the public fields, and the token itself only in create's answer.
    const [listed] = await callerFor(owner).apiTokens.list();
    expect(Object.keys(listed!).sort()).toEqual(["createdAt", "expiresAt", "id", "kind", "lastUsedAt", "name", "owner", "prefix", "repositories", "repositoryIds", "revokedAt", "role"]);
    expect(JSON.stringify(listed)).not.toContain(created.token);
  });

  it("a password hash", async () => {
    const person = await callerFor(admin).users.create({ email: `p-${uid()}@example.test`, name: "Pat", password: "correct horse battery", isAdmin: false, roles: [] });
    const { password } = await db.account.findFirstOrThrow({ where: { userId: person.id, providerId: "credential" }, select: { password: true } });
    expect(password).toBeTruthy();
    const wire = await throughOutput("users.list", admin, async () => (await listUsers({ db, actor: admin })).map((u) => ({ ...u, password, roles: u.roles.map((r) => ({ ...r, password })) })));
    expect(wire).toContain(person.email);
    expect(wire).not.toContain(password!);
    expect(Object.keys(person).sort()).toEqual(["email", "id", "isAdmin", "name"]);
  });

  it("the GitHub App's sealed key and webhook secret", async () => {
    const app = fake.apps.createApp({ name: `Airlock ${uid()}`, owner: "acme" });
    const key = loadSealingKey({ dataDir: await mkdtemp(join(tmpdir(), "airlock-key-")) });
    await db.githubApp.deleteMany();
    await saveExistingApp({ db, actor: admin, input: { appId: app.id, privateKey: app.pem, webhookSecret: app.webhookSecret }, key, apiUrl: fake.url });
    const row = await db.githubApp.findUniqueOrThrow({ where: { id: "app" } });
    const wire = await throughOutput("githubApp.saveExisting", admin, async () => ({ ...row, ...(await getGithubAppSummary(db)), privateKey: app.pem, webhookSecret: app.webhookSecret }));
    expect(wire).toContain(app.slug);
    for (const secret of [app.pem, app.webhookSecret, row.privateKeySealed, row.webhookSecretSealed]) expect(wire).not.toContain(secret);
    const settings = JSON.stringify(await callerFor(admin).githubApp.get());
    for (const secret of [app.pem, app.webhookSecret, row.privateKeySealed, row.webhookSecretSealed]) expect(settings).not.toContain(secret);
  });

  it("a secret's value beside its grant, on a page every member reads", async () => {
    const stackId = (await makeStack(db, admin)).id;
    const grant = await callerFor(admin).pools.createSecretGrant({ secretName: `TOKEN_${uid().toUpperCase()}`, stackId, privileged: false, trustedPoolsOnly: true, taskKinds: [] });
    const value = `s3cret-${uid()}`;
    const wire = await throughOutput("pools.settings", admin, async () => {
      const s = await getPoolSettings({ db, actor: admin });
      return { ...s, value, secretGrants: s.secretGrants.map((g) => ({ ...g, value, receivers: g.receivers.map((r) => ({ ...r, value })) })) };
    });
    expect(wire).toContain(grant.secretName);
    expect(wire).not.toContain(value);
    // Through the real HTTP handler (GET, as the browser asks): the wire carries the declared fields.
    const res = await fetchRequestHandler({
      endpoint: "/api/trpc",
      req: new Request("http://localhost:3000/api/trpc/pools.settings"),
      router: appRouter,
      createContext: () => createTRPCContext({ user: admin }),
    });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { result: { data: { json: { secretGrants: Record<string, unknown>[] } } } };
    const sent = body.result.data.json.secretGrants.find((g) => g.id === grant.id);
    expect(Object.keys(sent!).sort()).toEqual(["createdAt", "id", "poolIds", "poolScope", "privileged", "receivers", "secretName", "stackId", "stackName", "taskKinds", "trustedPoolsOnly", "updatedAt", "version"]);
  });

  it("an approval's presented JSON and its patch, in the queue", async () => {
    const maintainer = await createUser();
    const repo = await createPatchRepository([[maintainer, "maintainer"]]);
    const { approvalId } = await createPatchApproval({ repo });
    const row = await db.approvalRequest.findUniqueOrThrow({ where: { id: approvalId }, include: { artifact: { select: { content: true } } } });
    const patch = row.artifact!.content!;
    const input = { repositoryId: repo.repository.id, limit: 50 };
    const wire = await throughOutput("approvals.list", maintainer, async () =>
      (await listApprovals({ db, repositoryIds: [repo.repository.id], input, now: new Date() })).map((a) => ({ ...a, presented: row.presented, patch, run: { ...a.run, patch } })),
    );
    expect(wire).toContain(approvalId);
    expect(wire).not.toContain(patch);
    expect(wire).not.toContain("presented");
    const [listed] = await callerFor(maintainer).approvals.list(input);
    expect(listed).toMatchObject({ id: approvalId, stackName: expect.any(String) });
    expect(Object.keys(listed!)).not.toContain("presented");
  });

  it("an approval whose stored presented record is corrupt: byId fails, it is not shown", async () => {
    const maintainer = await createUser();
    const repo = await createPatchRepository([[maintainer, "maintainer"]]);
    const { approvalId } = await createPatchApproval({ repo });
    const marker = `corrupt-${uid()}`;
    // A record of another shape than zPresented: written behind the app's back (or by an old build).
    await db.approvalRequest.update({ where: { id: approvalId }, data: { presented: { kind: marker, files: marker } } });
    await expect(callerFor(maintainer).approvals.byId({ approvalId })).rejects.toMatchObject({ code: "INTERNAL_SERVER_ERROR" });
    const res = await fetchRequestHandler({
      endpoint: "/api/trpc",
      req: new Request(`http://localhost:3000/api/trpc/approvals.byId?input=${encodeURIComponent(JSON.stringify({ json: { approvalId } }))}`),
      router: appRouter,
      createContext: () => createTRPCContext({ user: maintainer }),
      onError: () => {},
    });
    expect(res.status).toBe(500);
    expect(await res.text()).not.toContain(marker);
  });

  it("a secret's value inside a stack's spec", async () => {
    const member = await createUser();
    await createRepository({ members: [[member, "viewer"]] });
    const stack = await makeStack(db, admin);
    const value = `sk-ant-${uid()}`;
    const wire = await throughOutput("stacks.byId", member, async () => {
      const s = await getStack({ db, actor: member, stackId: stack.id });
      return { ...s, apiKey: value, spec: { ...s.spec, apiKey: value, adapter: { ...s.spec.adapter, apiKey: value } } };
    });
    expect(wire).toContain(stack.id);
    expect(wire).not.toContain(value);
  });
});
