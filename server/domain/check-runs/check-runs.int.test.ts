// Airlock's check run on a GitHub pull request, against the GitHub API test double: created for
// a suggestion with its two requested actions (within GitHub's bounds) and for a run an auto-run
// rule started (none for a repository without the app), following the run once per state, and a click (check_run.requested_action, delivered as GitHub sends it) dispatching
// the suggestion only for a permitted person. Hostile: a stranger's, a viewer's and a bot's
// click, another installation's, another app's check run, a forged external id, a replayed
// delivery, and a fork pull request.
import { afterAll, beforeAll, describe, expect, it } from "vitest";

process.env.GITHUB_WEBHOOK_SECRET = "webhook-secret-for-check-run-tests";

const { getDb, transaction } = await import("@/server/db");
const { createRepository, createUser } = await import("@/server/testing/factories");
const { createPullRequest, createRule, createStack } = await import("@/server/domain/ingest/fixtures/world");
const { checkRunRequestedAction, failedWorkflowJob } = await import("@/server/domain/ingest/fixtures/deliveries");
const { evaluateAll, post } = await import("@/server/domain/evaluation/fixtures/harness");
const { evaluateDelivery } = await import("@/server/domain/evaluation/evaluate");
const { startFakeGithub } = await import("@/server/forges/github/testing/fake-github");
const { githubClient } = await import("@/server/forges/github/client");
const { saveExistingApp } = await import("@/server/domain/github-app/app-service");
const { sealingKey } = await import("@/server/domain/github-app/key");
const { transitionRun } = await import("@/server/domain/runs/transition");
const { REQUESTED_ACTIONS } = await import("./surface");
const { syncCheckRun } = await import("./sync");
const { runEndedTask } = await import("@/server/queue/tasks/reactions");
const { contentDigest } = await import("@/server/lib/digest");
const { createStack: createExecStack, scriptedSpec } = await import("@/server/queue/testing/fixtures");
const { githubCollaboratorRole, processRequestedAction } = await import("../use-cases/requested-action");

type Fake = Awaited<ReturnType<typeof startFakeGithub>>;
const db = getDb();
let fake: Fake;
let app: ReturnType<Fake["apps"]["createApp"]>;
let stackId = "";
let n = 0;

beforeAll(async () => {
  fake = await startFakeGithub();
  app = fake.apps.createApp({ name: "Airlock checks", owner: "acme" });
  const admin = await createUser({ isAdmin: true });
  // The server's own key: the webhook route opens the app's webhook secret with it.
  const key = sealingKey();
  await db.githubApp.deleteMany();
  await saveExistingApp({ db, actor: admin, input: { appId: app.id, privateKey: app.pem, webhookSecret: app.webhookSecret }, key, apiUrl: fake.url });
  stackId = (await createStack(db)).id;
});
afterAll(() => fake.close());

const clientFor = async ({ fullName, installationId }: { fullName: string; installationId: bigint }) =>
  githubClient({ auth: { kind: "installation", app: { appId: app.id, privateKey: app.pem }, installationId: installationId.toString(), repository: fullName }, baseUrl: fake.url, throttle: false });
const sync = (runId: string) => syncCheckRun({ db, runId, clientFor, airlockUrl: "http://airlock.test" });

/** A GitHub repository with the app installed, a PR at a real commit, a failed-check rule, and the failure's suggestion. */
async function suggestion(opts: { fork?: boolean; stackId?: string; action?: "suggest" | "auto_run"; installed?: boolean } = {}) {
  const fullName = `acme/checks-${++n}-${Date.now().toString(36)}`;
  const { headSha } = fake.createRepository(fullName, { branch: "main", files: { "README.md": "hi\n" }, pulls: [12] });
  const installation = fake.apps.install({ appId: app.id, account: "acme", repositories: [fullName] });
  const repository = await createRepository({ fullName });
  await db.repository.update({ where: { id: repository.id }, data: { forge: "github", githubInstallationId: opts.installed === false ? null : BigInt(installation.id), autoRunOnFailedCheck: opts.action === "auto_run" } });
  await createRule(db, { kind: "failed_check", stackId: opts.stackId ?? stackId, repositoryId: repository.id, action: opts.action ?? "suggest" });
  await createPullRequest(db, { repositoryId: repository.id, number: 12, headSha, headRef: opts.fork ? "patch-1" : "feature/x", isFork: opts.fork ?? false });
  const failure = failedWorkflowJob({ repo: fullName, runId: 4000 + n, jobId: 40_000 + n, jobName: "unit-tests", step: "Run vitest", headSha, headBranch: opts.fork ? "patch-1" : "feature/x" });
  const evaluated = await evaluateDelivery({ db, deliveryId: (await post(failure)).deliveryId });
  const runId = evaluated.created[0]?.runId as string;
  expect(evaluated.created).toEqual([expect.objectContaining({ status: opts.action === "auto_run" ? "queued" : "suggested" })]);
  return { fullName, repository, installation, headSha, runId };
}

/** An Airlock user linked to a GitHub account (GitHub sign-in), with a role on the repository. */
async function linkedUser(repositoryId: string, role: "viewer" | "maintainer", githubId: number) {
  const user = await createUser();
  await db.membership.create({ data: { userId: user.id, repositoryId, role } });
  await db.account.create({ data: { id: `gh-${user.id}`, accountId: String(githubId), providerId: "github", userId: user.id } });
  return user;
}

const syncJobs = async (runId: string) => {
  const rows = await db.$queryRaw<{ n: bigint }[]>`
    SELECT count(*) AS n FROM graphile_worker._private_jobs j JOIN graphile_worker._private_tasks t ON t.id = j.task_id
    WHERE t.identifier = 'checkrun.sync' AND j.payload->>'runId' = ${runId}`;
  return Number(rows[0]?.n ?? 0);
};

const collaboratorRole = () => githubCollaboratorRole({ app: async () => ({ appId: app.id, privateKey: app.pem }), baseUrl: fake.url });

async function click(s: Awaited<ReturnType<typeof suggestion>>, checkRunId: number, opts: { identifier?: string; sender: { login: string; id: number; type?: "User" | "Bot" }; installationId?: number; checkRun?: Record<string, unknown>; deliveryId?: string }) {
  const delivery = checkRunRequestedAction({
    repo: s.fullName,
    checkRun: opts.checkRun ?? fake.checks.json(checkRunId),
    identifier: opts.identifier ?? "diagnose",
    sender: opts.sender,
    installationId: opts.installationId ?? s.installation.id,
  });
  const posted = await post(delivery, opts.deliveryId);
  if (posted.status !== 202) return { posted, result: null };
  return { posted, result: await processRequestedAction({ db, deliveryId: posted.deliveryId, collaboratorRole: collaboratorRole() }) };
}

const move = (runId: string, from: "suggested" | "queued" | "running", to: "running" | "succeeded" | "failed") =>
  transaction(db, "test", (tx) => transitionRun(tx, { runId, from, to, reason: "test", now: new Date() }));

describe("the check run", () => {
  it("offers the two actions within GitHub's bounds", () => {
    for (const a of REQUESTED_ACTIONS) {
      expect(a.label.length).toBeLessThanOrEqual(20);
      expect(a.identifier.length).toBeLessThanOrEqual(20);
      expect(a.description.length).toBeLessThanOrEqual(40);
    }
    expect(REQUESTED_ACTIONS.map((a) => a.label)).toEqual(["Diagnose with agent", "Attempt repair"]);
  });

  it("is created on the PR head for a suggestion, with its actions, and follows the run once per state", async () => {
    const s = await suggestion();
    expect(await syncJobs(s.runId)).toBe(1);
    expect(await sync(s.runId)).toMatchObject({ kind: "written", state: "offered" });
    const [created] = fake.checks.all(s.fullName);
    expect(created).toMatchObject({
      appId: app.id,
      name: "Airlock",
      headSha: s.headSha,
      externalId: s.runId,
      detailsUrl: `http://airlock.test/runs/${s.runId}`,
      status: "completed",
      conclusion: "action_required",
      actions: [
        { identifier: "diagnose", label: "Diagnose with agent", description: expect.any(String) },
        { identifier: "repair", label: "Attempt repair", description: expect.any(String) },
      ],
    });
    expect(created?.output.summary).toContain("unit-tests");
    // A second sync of the same state writes nothing.
    expect(await sync(s.runId)).toMatchObject({ kind: "unchanged" });

    const maintainer = await linkedUser(s.repository.id, "maintainer", 7_100_000 + n);
    const { result } = await click(s, created!.id, { sender: { login: "maintainer-one", id: 7_100_000 + n } });
    expect(result).toMatchObject({ outcome: "processed", runId: s.runId });
    expect(result?.detail).toMatch(/"Diagnose with agent" by maintainer-one \(Airlock maintainer of the repository\): run #\d+ queued/);
    const run = await db.agentDispatchRun.findUniqueOrThrow({ where: { id: s.runId }, include: { causers: true } });
    expect(run.status).toBe("queued");
    expect(run.causers.map((c) => c.userId)).toEqual([maintainer.id]);
    expect(await db.auditEntry.count({ where: { objectId: s.runId, action: "run.dispatch", actorUserId: maintainer.id } })).toBe(1);

    // Each transition queues the sync; each state is written once, buttons gone after the click.
    expect(await syncJobs(s.runId)).toBeGreaterThanOrEqual(1);
    await sync(s.runId);
    await sync(s.runId);
    await move(s.runId, "queued", "running");
    await sync(s.runId);
    await move(s.runId, "running", "succeeded");
    await sync(s.runId);
    await sync(s.runId);
    const after = fake.checks.get(created!.id)!;
    expect(after.history).toEqual([
      { method: "POST", status: "completed", conclusion: "action_required" },
      { method: "PATCH", status: "queued", conclusion: null },
      { method: "PATCH", status: "in_progress", conclusion: null },
      { method: "PATCH", status: "completed", conclusion: "success" },
    ]);
    expect(after.actions).toEqual([]);
    expect(fake.checks.all(s.fullName)).toHaveLength(1);
  });

  it("is created for a run an auto-run rule started, without actions, and follows that run", async () => {
    const s = await suggestion({ action: "auto_run" });
    const surface = await db.checkRunSurface.findUniqueOrThrow({ where: { runId: s.runId } });
    expect(surface).toMatchObject({ headSha: s.headSha, installationId: BigInt(s.installation.id) });
    expect(await syncJobs(s.runId)).toBe(1);
    expect(await sync(s.runId)).toMatchObject({ kind: "written", state: "queued" });
    const [created] = fake.checks.all(s.fullName);
    expect(created).toMatchObject({ appId: app.id, name: "Airlock", headSha: s.headSha, externalId: s.runId, status: "queued", actions: [], detailsUrl: `http://airlock.test/runs/${s.runId}` });
    expect(created?.output.summary).toContain("A diagnose run, queued.");
    // Written by the installation's token, not a personal one.
    const posted = fake.requests.filter((r) => r.method === "POST" && r.path === `/repos/${s.fullName}/check-runs`);
    expect(posted).toHaveLength(1);
    expect(posted[0]?.authorization).toMatch(/^token ghs_/);

    await move(s.runId, "queued", "running");
    await sync(s.runId);
    await move(s.runId, "running", "failed");
    await sync(s.runId);
    expect(fake.checks.get(created!.id)!.history).toEqual([
      { method: "POST", status: "queued", conclusion: null },
      { method: "PATCH", status: "in_progress", conclusion: null },
      { method: "PATCH", status: "completed", conclusion: "neutral" },
    ]);
    expect(fake.checks.all(s.fullName)).toHaveLength(1);
  });

  it("a repository without an installation (a personal token's) gets no check run", async () => {
    for (const action of ["suggest", "auto_run"] as const) {
      const s = await suggestion({ action, installed: false });
      expect(await db.checkRunSurface.count({ where: { runId: s.runId } })).toBe(0);
      expect(await syncJobs(s.runId)).toBe(0);
      expect(await sync(s.runId)).toEqual({ kind: "none", reason: "the run has no check run on GitHub" });
      expect(fake.checks.all(s.fullName)).toEqual([]);
    }
  });

  it("a create whose answer was lost is found on the commit by its external id, not made twice", async () => {
    const s = await suggestion();
    await sync(s.runId);
    // As if the worker died after GitHub created the check run and before Airlock stored its id.
    await db.checkRunSurface.update({ where: { runId: s.runId }, data: { externalId: null, state: null } });
    expect(await sync(s.runId)).toMatchObject({ kind: "written", state: "offered" });
    const all = fake.checks.all(s.fullName);
    expect(all).toHaveLength(1);
    expect(all[0]!.history.map((h) => h.method)).toEqual(["POST", "PATCH"]);
    expect((await db.checkRunSurface.findUniqueOrThrow({ where: { runId: s.runId } })).externalId).toBe(BigInt(all[0]!.id));
  });

  it("a failed run completes the check run neutral, never as a failed check Airlock would act on", async () => {
    const s = await suggestion();
    await sync(s.runId);
    await linkedUser(s.repository.id, "maintainer", 7_200_000 + n);
    const id = fake.checks.all(s.fullName)[0]!.id;
    await click(s, id, { sender: { login: "m", id: 7_200_000 + n } });
    await move(s.runId, "queued", "failed");
    await sync(s.runId);
    expect(fake.checks.get(id)).toMatchObject({ status: "completed", conclusion: "neutral" });
  });
});

describe("the diagnosis on the check run", () => {
  const quiet = { get db() { return getDb(); }, log: () => {} };

  async function succeededDiagnosis(botComments: boolean) {
    // A stack whose write-backs the change gate may exempt (the diagnosis comment's precondition).
    const exempting = await createExecStack(scriptedSpec({ approvalMode: "exceptions_allowed" }));
    const s = await suggestion({ stackId: exempting.id });
    await db.repository.update({ where: { id: s.repository.id }, data: { botCommentsAllowed: botComments } });
    await sync(s.runId);
    const maintainerId = 7_700_000 + n;
    await linkedUser(s.repository.id, "maintainer", maintainerId);
    await click(s, fake.checks.all(s.fullName)[0]!.id, { sender: { login: "m", id: maintainerId } });
    await move(s.runId, "queued", "running");
    const content = "The date helper is off by one. Ping @octocat <script>alert(1)</script>";
    await db.artifact.create({ data: { runId: s.runId, kind: "diagnosis", name: "diagnosis.md", content, digest: contentDigest(content), sizeBytes: Buffer.byteLength(content) } });
    await move(s.runId, "running", "succeeded");
    await sync(s.runId);
    // The run's end: requestDiagnosisComment asks the change gate (the reaction a worker runs).
    await runEndedTask({ runId: s.runId, status: "succeeded" }, quiet);
    await sync(s.runId);
    return { ...s, checkRun: fake.checks.all(s.fullName)[0]! };
  }

  it("is carried when the change gate exempts the bot's post, made inert like the comment", async () => {
    const s = await succeededDiagnosis(true);
    expect(await db.writeBack.count({ where: { runId: s.runId, kind: "comment", approvalId: null } })).toBe(1);
    expect(await syncJobs(s.runId)).toBeGreaterThanOrEqual(1);
    const summary = s.checkRun.output.summary ?? "";
    expect(summary).toContain("The date helper is off by one.");
    expect(summary).toContain("@\u200Boctocat");
    expect(summary).toContain("&lt;script&gt;");
    expect(summary).not.toContain("<script>");
    expect(s.checkRun.history.at(-1)).toEqual({ method: "PATCH", status: "completed", conclusion: "success" });
    expect(await sync(s.runId)).toMatchObject({ kind: "unchanged", state: "succeeded+diagnosis" });
  });

  it("is left out when the repository does not allow bot posts: the check run links to the run", async () => {
    const s = await succeededDiagnosis(false);
    expect(await db.writeBack.count({ where: { runId: s.runId, kind: "comment" } })).toBe(0);
    expect(s.checkRun.output.summary).not.toContain("off by one");
    expect(s.checkRun).toMatchObject({ conclusion: "success", detailsUrl: `http://airlock.test/runs/${s.runId}` });
  });
});

describe("through the worker's job", () => {
  it("a click delivered to the webhook is applied by delivery.evaluate, not evaluated as a check", async () => {
    const s = await suggestion();
    await sync(s.runId);
    const maintainerId = 7_800_000 + n;
    await linkedUser(s.repository.id, "maintainer", maintainerId);
    const delivery = checkRunRequestedAction({ repo: s.fullName, checkRun: fake.checks.json(fake.checks.all(s.fullName)[0]!.id), identifier: "diagnose", sender: { login: "m", id: maintainerId }, installationId: s.installation.id });
    const posted = await post(delivery);
    expect(posted).toMatchObject({ status: 202, body: { status: "accepted" } });
    await evaluateAll(db, [posted.deliveryId]);
    expect(await db.webhookDelivery.findUniqueOrThrow({ where: { deliveryId: posted.deliveryId } })).toMatchObject({ outcome: "processed", detail: expect.stringContaining("queued") });
    expect((await db.agentDispatchRun.findUniqueOrThrow({ where: { id: s.runId } })).status).toBe("queued");
  });
});

describe("a click that must not dispatch", () => {
  it("a stranger's, a viewer's and a bot's click are refused and named on the run", async () => {
    const s = await suggestion();
    await sync(s.runId);
    const id = fake.checks.all(s.fullName)[0]!.id;
    await linkedUser(s.repository.id, "viewer", 7_300_000 + n);
    const stranger = await click(s, id, { sender: { login: "stranger", id: 9_999_001 } });
    expect(stranger.result).toMatchObject({ outcome: "ignored", detail: expect.stringContaining("stranger may not dispatch from GitHub (no author association or Airlock role is known for this actor)") });
    const viewer = await click(s, id, { sender: { login: "viewer", id: 7_300_000 + n } });
    expect(viewer.result?.detail).toContain("Airlock viewer of the repository");
    const bot = await click(s, id, { sender: { login: "some-bot[bot]", id: 9_999_002, type: "Bot" } });
    expect(bot.result?.detail).toContain("bots cannot dispatch");
    expect((await db.agentDispatchRun.findUniqueOrThrow({ where: { id: s.runId } })).status).toBe("suggested");
    const logs = await db.runEvent.findMany({ where: { runId: s.runId, type: "log" } });
    expect(logs.map((e) => JSON.stringify(e.payload)).filter((t) => t.includes("clicked on GitHub"))).toHaveLength(3);
    const stored = await db.webhookDelivery.findUniqueOrThrow({ where: { deliveryId: stranger.posted.deliveryId } });
    expect(stored).toMatchObject({ outcome: "ignored", detail: expect.stringContaining("refused") });
  });

  it("GitHub's word on a person without an Airlock account: write access dispatches, triage does not", async () => {
    const s = await suggestion();
    await sync(s.runId);
    const id = fake.checks.all(s.fullName)[0]!.id;
    fake.setCollaborator(s.fullName, "triager", "triage");
    const triager = await click(s, id, { sender: { login: "triager", id: 9_999_010 } });
    expect(triager.result?.detail).toContain("GitHub says their role is triage, and dispatch needs write access or more");
    expect((await db.agentDispatchRun.findUniqueOrThrow({ where: { id: s.runId } })).status).toBe("suggested");
    fake.setCollaborator(s.fullName, "writer", "maintain");
    const writer = await click(s, id, { sender: { login: "writer", id: 9_999_011 } });
    expect(writer.result).toMatchObject({ outcome: "processed", detail: expect.stringContaining("GitHub role maintain on the repository (COLLABORATOR: a repository collaborator)") });
    expect(fake.requests.some((r) => r.path === `/repos/${s.fullName}/collaborators/writer/permission` && r.authorization?.startsWith("token ghs_"))).toBe(true);
    expect((await db.agentDispatchRun.findUniqueOrThrow({ where: { id: s.runId } })).status).toBe("queued");
  });

  it("another installation's click, another app's check run and a forged external id are ignored", async () => {
    const s = await suggestion();
    await sync(s.runId);
    const other = await suggestion();
    await sync(other.runId);
    const id = fake.checks.all(s.fullName)[0]!.id;
    const maintainerId = 7_400_000 + n;
    await linkedUser(s.repository.id, "maintainer", maintainerId);
    const sender = { login: "maintainer", id: maintainerId };

    const viaOther = await click(s, id, { sender, installationId: other.installation.id });
    expect(viaOther.result?.detail).toContain(`not the one that covers ${s.fullName}`);
    const json = fake.checks.json(id);
    const foreignApp = await click(s, id, { sender, checkRun: { ...json, app: { ...(json.app as object), id: 1234 } } });
    expect(foreignApp.result?.detail).toContain("belongs to another app");
    // The other repository's run id in this check run's external_id: not Airlock's check run for it.
    const forged = await click(s, id, { sender, checkRun: { ...json, external_id: other.runId } });
    expect(forged.result?.detail).toContain(`is not one of Airlock's check runs on ${s.fullName}`);
    const unknownAction = await click(s, id, { sender, identifier: "merge" });
    expect(unknownAction.result?.detail).toContain(`"merge" is not an action Airlock offers`);
    const malformed = await click(s, id, { sender, checkRun: { ...json, head_sha: "not-a-sha" } });
    expect(malformed.result).toMatchObject({ outcome: "rejected", detail: expect.stringContaining("check_run.head_sha") });

    for (const runId of [s.runId, other.runId]) expect((await db.agentDispatchRun.findUniqueOrThrow({ where: { id: runId } })).status).toBe("suggested");
  });

  it("a replayed delivery and a second click dispatch nothing more", async () => {
    const s = await suggestion();
    await sync(s.runId);
    const id = fake.checks.all(s.fullName)[0]!.id;
    const maintainerId = 7_500_000 + n;
    await linkedUser(s.repository.id, "maintainer", maintainerId);
    const first = await click(s, id, { sender: { login: "m", id: maintainerId } });
    expect(first.result?.outcome).toBe("processed");
    const replay = await click(s, id, { sender: { login: "m", id: maintainerId }, deliveryId: first.posted.deliveryId });
    expect(replay.posted).toMatchObject({ status: 200, body: { status: "duplicate" } });
    expect(await processRequestedAction({ db, deliveryId: first.posted.deliveryId })).toMatchObject({ detail: "already processed" });
    const second = await click(s, id, { sender: { login: "m", id: maintainerId }, identifier: "repair" });
    expect(second.result).toMatchObject({ outcome: "ignored", detail: expect.stringContaining("only a suggestion can be dispatched") });
    expect(await db.dispatchAttempt.count({ where: { runId: s.runId } })).toBe(1);
    expect(await db.auditEntry.count({ where: { objectId: s.runId, action: "run.dispatch" } })).toBe(1);
  });

  it("on a fork PR the fork's author cannot dispatch, and a maintainer's dispatch stays a fork's run", async () => {
    const s = await suggestion({ fork: true });
    const run = await db.agentDispatchRun.findUniqueOrThrow({ where: { id: s.runId } });
    expect(run).toMatchObject({ origin: "fork", isFork: true });
    await sync(s.runId);
    const id = fake.checks.all(s.fullName)[0]!.id;
    const author = await click(s, id, { sender: { login: "fork-author", id: 9_999_003 } });
    expect(author.result?.outcome).toBe("ignored");
    const maintainerId = 7_600_000 + n;
    await linkedUser(s.repository.id, "maintainer", maintainerId);
    const byMaintainer = await click(s, id, { sender: { login: "m", id: maintainerId } });
    expect(byMaintainer.result?.outcome).toBe("processed");
    expect(await db.agentDispatchRun.findUniqueOrThrow({ where: { id: s.runId } })).toMatchObject({ status: "queued", origin: "fork", isFork: true });
  });
});
