import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { POST as authPost } from "@/app/api/auth/[...all]/route";
import { getDb } from "@/server/db";
import { startGitHubOAuthDouble, type GitHubOAuthDouble } from "@/server/testing/github-oauth-double";
import { callerFor, createRepository, createUser } from "@/server/testing/factories";
import { createAuth, getAuth } from "./index";

// Accounts by invitation, against a real PostgreSQL and the real auth routes: nobody signs
// themselves up; an admin's one-time link makes one account with its roles; GitHub sign-in (a
// test double of GitHub's OAuth and REST endpoints, over real HTTP) admits invited and
// organisation-member accounts only; a stranger gets no user, no account and no session.

const base = "http://localhost:3000";
const db = () => getDb();
let double: GitHubOAuthDouble;

beforeAll(async () => {
  double = await startGitHubOAuthDouble();
});
afterAll(async () => {
  await double.close();
});

const jsonPost = (path: string, body: unknown, headers: Record<string, string> = {}) =>
  new Request(`${base}/api/auth${path}`, { method: "POST", headers: { "content-type": "application/json", origin: base, ...headers }, body: JSON.stringify(body) });
const cookiesOf = (res: Response) => res.headers.getSetCookie().map((c) => c.split(";")[0]).join("; ");

describe("email sign-up is off", () => {
  it("POST /api/auth/sign-up/email is refused and creates nothing", async () => {
    const email = "stranger@example.test";
    const res = await authPost(jsonPost("/sign-up/email", { email, password: "a-strong-password", name: "Stranger" }));
    expect(res.status).toBeGreaterThanOrEqual(400);
    expect(res.status).toBeLessThan(500);
    expect(res.headers.getSetCookie()).toEqual([]);
    expect(await db().user.count({ where: { email } })).toBe(0);
    await expect(getAuth().api.signUpEmail({ body: { email, password: "a-strong-password", name: "x" } })).rejects.toThrow();
    expect(await db().user.count({ where: { email } })).toBe(0);
  });
});

describe("invitations", () => {
  it("an invited person makes their account from the link, gets its roles and signs in; the link works once", async () => {
    const admin = await createUser({ isAdmin: true });
    const repo = await createRepository();
    const email = `invitee-${Date.now()}@example.test`;
    const made = await callerFor(admin).users.invite({ email, isAdmin: false, roles: [{ repositoryId: repo.id, role: "maintainer" }], expiresInHours: 72 });
    const token = made.path.split("/").at(-1)!;
    // Only the token's digest is stored.
    expect(JSON.stringify(await db().invitation.findUniqueOrThrow({ where: { id: made.id } }))).not.toContain(token);

    expect(await callerFor(null).invitation.lookup({ token })).toMatchObject({ email, state: "open", refusal: null });
    // Two tabs accepting at once: one account.
    const accepted = await Promise.allSettled([
      callerFor(null).invitation.accept({ token, name: "Invitee", password: "invitee-password" }),
      callerFor(null).invitation.accept({ token, name: "Invitee", password: "invitee-password" }),
    ]);
    expect(accepted.filter((r) => r.status === "fulfilled")).toHaveLength(1);
    expect(await db().user.count({ where: { email } })).toBe(1);
    await expect(callerFor(null).invitation.accept({ token, name: "Again", password: "another-password" })).rejects.toMatchObject({ code: "CONFLICT", message: expect.stringMatching(/already used/) });

    const signIn = await authPost(jsonPost("/sign-in/email", { email, password: "invitee-password" }));
    expect(signIn.status).toBe(200);
    const session = await getAuth().api.getSession({ headers: new Headers({ cookie: cookiesOf(signIn) }) });
    expect(session?.user.email).toBe(email);
    const user = await db().user.findUniqueOrThrow({ where: { email }, include: { memberships: true } });
    expect(user).toMatchObject({ admittedVia: "invitation", isAdmin: false });
    expect(user.memberships.map((m) => [m.repositoryId, m.role])).toEqual([[repo.id, "maintainer"]]);
    expect(await db().auditEntry.count({ where: { action: { in: ["user.invite", "user.invite.accept"] }, objectId: made.id } })).toBe(2);
  });

  it("refuses an expired, a withdrawn and a made-up link, and a non-admin inviting", async () => {
    const admin = await createUser({ isAdmin: true });
    const member = await createUser();
    const past = new Date(Date.now() - 100 * 3_600_000);
    const expired = await callerFor(admin, () => past).users.invite({ email: "late@example.test", isAdmin: false, roles: [], expiresInHours: 24 });
    await expect(callerFor(null).invitation.accept({ token: expired.path.split("/").at(-1)!, name: "Late", password: "late-password" })).rejects.toMatchObject({ code: "CONFLICT", message: expect.stringMatching(/expired/) });
    const withdrawn = await callerFor(admin).users.invite({ email: "gone@example.test", isAdmin: true, roles: [], expiresInHours: 24 });
    await callerFor(admin).users.revokeInvitation({ invitationId: withdrawn.id });
    await expect(callerFor(null).invitation.accept({ token: withdrawn.path.split("/").at(-1)!, name: "Gone", password: "gone-password" })).rejects.toMatchObject({ message: expect.stringMatching(/withdrawn/) });
    await expect(callerFor(null).invitation.accept({ token: "A".repeat(43), name: "Guess", password: "guess-password" })).rejects.toMatchObject({ code: "NOT_FOUND" });
    await expect(callerFor(member).users.invite({ email: "x@example.test", isAdmin: true, roles: [], expiresInHours: 24 })).rejects.toMatchObject({ code: "FORBIDDEN" });
    expect(await db().user.count({ where: { email: { in: ["late@example.test", "gone@example.test", "x@example.test"] } } })).toBe(0);
  });

  it("an admin creates an account with roles; the last admin cannot be demoted", async () => {
    const admin = await createUser({ isAdmin: true });
    const repo = await createRepository();
    const created = await callerFor(admin).users.create({ email: "made@example.test", name: "Made", password: "made-password", isAdmin: false, roles: [{ repositoryId: repo.id, role: "viewer" }] });
    expect((await authPost(jsonPost("/sign-in/email", { email: "made@example.test", password: "made-password" }))).status).toBe(200);
    await expect(callerFor(admin).users.create({ email: "made@example.test", name: "Twice", password: "made-password", isAdmin: false, roles: [] })).rejects.toMatchObject({ code: "CONFLICT" });
    expect((await callerFor(admin).users.list()).find((u) => u.id === created.id)).toMatchObject({ admittedVia: "admin", signIn: ["password"], roles: [{ repositoryId: repo.id, role: "viewer" }] });
    await db().user.updateMany({ where: { isAdmin: true, id: { not: admin.id } }, data: { isAdmin: false } });
    await expect(callerFor(admin).users.setAdmin({ userId: admin.id, isAdmin: false })).rejects.toMatchObject({ code: "CONFLICT", message: expect.stringMatching(/last Airlock admin/) });
  });
});

describe("an account with no role reads nothing beyond its own profile", () => {
  it("stacks, policies, pools, grants, trigger rules and global decisions are refused; lists are empty", async () => {
    const nobody = await createUser();
    const caller = callerFor(nobody);
    const refused = { code: "FORBIDDEN", message: expect.stringMatching(/no role on any repository/) };
    await expect(caller.stacks.list()).rejects.toMatchObject(refused);
    await expect(caller.stacks.byId({ stackId: "any" })).rejects.toMatchObject(refused);
    await expect(caller.stacks.options()).rejects.toMatchObject(refused);
    await expect(caller.policies.list()).rejects.toMatchObject(refused);
    await expect(caller.policies.byKind({ kind: "change_gate" })).rejects.toMatchObject(refused);
    await expect(caller.pools.settings()).rejects.toMatchObject(refused);
    await expect(caller.triggers.list()).rejects.toMatchObject(refused);
    await expect(caller.triggers.formOptions()).rejects.toMatchObject(refused);
    await expect(caller.proofs.byId({ decisionId: "any" })).rejects.toMatchObject(refused);
    expect((await caller.runs.list({})).items).toEqual([]);
    expect((await caller.approvals.list({})).length).toBe(0);
    expect((await caller.audit.list({})).items).toEqual([]);
    expect(await caller.repositorySettings.list()).toEqual([]);
    await expect(caller.users.me()).resolves.toMatchObject({ id: nobody.id, email: nobody.email, repositoryRoles: 0 });
    // A viewer of one repository reads the shared configuration again.
    await createRepository({ members: [[nobody, "viewer"]] });
    await expect(caller.policies.list()).resolves.toBeInstanceOf(Array);
  });
});

describe("GitHub sign-in (against a test double of GitHub)", () => {
  const githubAuth = (org: string | null = null, team: string | null = null) =>
    createAuth({
      db: db(),
      secret: "test-secret-not-for-production-0123456789",
      baseURL: base,
      github: { clientId: double.clientId, clientSecret: double.clientSecret, webUrl: double.url, apiUrl: double.apiUrl, org, team },
      admission: { emailSignUp: false, org, team },
      rateLimit: false,
      secureCookies: false,
    });

  /** The browser's round trip: sign-in/social -> GitHub authorize -> callback. */
  async function signInWithGitHub(auth: ReturnType<typeof githubAuth>, login: string) {
    double.signIn(login);
    const start = await auth.handler(jsonPost("/sign-in/social", { provider: "github", callbackURL: "/runs", errorCallbackURL: "/sign-in" }));
    expect(start.status).toBe(200);
    const { url } = (await start.json()) as { url: string };
    expect(url.startsWith(`${double.url}/login/oauth/authorize?`)).toBe(true);
    const authorize = await fetch(url, { redirect: "manual" });
    const callback = authorize.headers.get("location")!;
    expect(callback.startsWith(`${base}/api/auth/callback/github?`)).toBe(true);
    const done = await auth.handler(new Request(callback, { headers: { cookie: cookiesOf(start) } }));
    const location = new URL(done.headers.get("location") ?? "/", base);
    return { status: done.status, location, cookie: cookiesOf(done), session: await auth.api.getSession({ headers: new Headers({ cookie: cookiesOf(done) }) }) };
  }

  let nextId = 5_000;
  const gitHubUser = (login: string, emails: { email: string; primary?: boolean; verified?: boolean }[], extra: { orgs?: Record<string, "active" | "pending">; teams?: Record<string, "active" | "pending"> } = {}) => {
    double.users.set(login, { id: ++nextId, login, name: login, emails: emails.map((e, i) => ({ email: e.email, primary: e.primary ?? i === 0, verified: e.verified ?? true })), ...extra });
    return nextId;
  };
  const nothingFor = async (email: string, githubId: number) => {
    expect(await db().user.count({ where: { email } })).toBe(0);
    expect(await db().account.count({ where: { providerId: "github", accountId: String(githubId) } })).toBe(0);
  };

  it("an invited person signs in with GitHub: the account gets the invitation's roles and a session", async () => {
    const admin = await createUser({ isAdmin: true });
    const repo = await createRepository();
    const email = "octo.invited@example.test";
    await callerFor(admin).users.invite({ email, isAdmin: false, roles: [{ repositoryId: repo.id, role: "viewer" }], expiresInHours: 24 });
    // The invited address is a secondary, verified email on GitHub: it is the one chosen.
    gitHubUser("octo-invited", [{ email: "octo@personal.example" }, { email, primary: false }]);
    const auth = githubAuth();
    const res = await signInWithGitHub(auth, "octo-invited");
    expect(res.location.pathname).toBe("/runs");
    expect(res.session?.user.email).toBe(email);
    const user = await db().user.findUniqueOrThrow({ where: { email }, include: { memberships: true } });
    expect(user.admittedVia).toBe("invitation");
    expect(user.memberships.map((m) => m.role)).toEqual(["viewer"]);
    expect(await db().invitation.count({ where: { email, acceptedAt: { not: null }, acceptedUserId: user.id } })).toBe(1);
    // Returning: the same GitHub account signs in again to the same user.
    expect((await signInWithGitHub(auth, "octo-invited")).session?.user.id).toBe(user.id);
  });

  it("a stranger's GitHub account gets nothing: no user, no account, no session, and the page says why", async () => {
    const id = gitHubUser("stranger", [{ email: "stranger@elsewhere.example" }]);
    const res = await signInWithGitHub(githubAuth(), "stranger");
    expect(res.location.pathname).toBe("/sign-in");
    expect(res.location.searchParams.get("error")).toBe("not_invited");
    expect(res.session).toBeNull();
    await nothingFor("stranger@elsewhere.example", id);
    expect(await db().session.count({ where: { user: { email: "stranger@elsewhere.example" } } })).toBe(0);
  });

  it("an invited address that GitHub has not verified admits nobody", async () => {
    const admin = await createUser({ isAdmin: true });
    const email = "victim@example.test";
    await callerFor(admin).users.invite({ email, isAdmin: true, roles: [], expiresInHours: 24 });
    // An attacker adds the invitee's address to their GitHub account without verifying it.
    const id = gitHubUser("squatter", [{ email: "squatter@evil.example" }, { email, primary: false, verified: false }]);
    const res = await signInWithGitHub(githubAuth(), "squatter");
    expect(res.location.searchParams.get("error")).toBe("not_invited");
    await nothingFor(email, id);
    await nothingFor("squatter@evil.example", id);
    expect(await db().invitation.count({ where: { email, acceptedAt: null } })).toBe(1);
  });

  it("members of the configured organisation (and team) are admitted with no role; pending members, non-members and leavers are not", async () => {
    gitHubUser("member", [{ email: "member@acme.example" }], { orgs: { acme: "active" }, teams: { "acme/core": "active" } });
    const pendingId = gitHubUser("pending", [{ email: "pending@acme.example" }], { orgs: { acme: "pending" } });
    const outsiderId = gitHubUser("outsider", [{ email: "outsider@acme.example" }], { orgs: { other: "active" } });
    const orgAuth = githubAuth("acme");
    const member = await signInWithGitHub(orgAuth, "member");
    expect(member.session?.user.email).toBe("member@acme.example");
    const user = await db().user.findUniqueOrThrow({ where: { email: "member@acme.example" }, include: { memberships: true } });
    expect(user).toMatchObject({ admittedVia: "github_org", isAdmin: false, memberships: [] });
    expect((await signInWithGitHub(orgAuth, "pending")).location.searchParams.get("error")).toBe("not_invited");
    await nothingFor("pending@acme.example", pendingId);
    expect((await signInWithGitHub(githubAuth("acme", "core"), "outsider")).location.searchParams.get("error")).toBe("not_invited");
    await nothingFor("outsider@acme.example", outsiderId);

    // Removed from the organisation: the next sign-in is refused.
    double.users.get("member")!.orgs = {};
    const after = await signInWithGitHub(orgAuth, "member");
    expect(after.location.searchParams.get("error")).toBe("no_longer_member");
    expect(after.session).toBeNull();
  });
});
