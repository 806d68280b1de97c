import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { verifyPassword } from "better-auth/crypto";
import { createElement } from "react";
import { renderToStaticMarkup } from "react-dom/server";
import parseDiff from "parse-diff";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getDb, Prisma } from "@/server/db";
import { RunStatus } from "@/server/db/generated/enums";
import { zRunEventInput } from "@/server/domain/events/catalogue";
import { stackSnapshot, zStackSpec } from "@/server/domain/stacks/spec";
import { git } from "@/server/forges/local/git";
import { bareRepoPath, resolveRevision } from "@/server/forges/local/repositories";
import { digestOf, sha256 } from "@/server/lib/digest";
import { PresentedSections, stackLine, targetLine } from "@/components/approvals/presented-sections";
import { zPresented } from "@/server/domain/approvals/schemas";
import { demoStory } from "@/server/domain/demo/story";
import { seed } from "./seed";
import { demoLogins, demoUsers } from "./seed/users";
import { localForgeFor } from "@/server/domain/approvals/test-fixtures";
import { executeWriteBack } from "@/server/domain/writebacks/execute";
import { listLocalReleases } from "@/server/forges/local/publish-release";
import { createLocalForge } from "@/server/forges/local/write-back";
import type { ForgeWriteBackRequest } from "@/server/forges/types";
import { callerFor } from "@/server/testing/factories";

const db = getDb();

/** The queued "writeback.execute" jobs' payloads. */
async function executeJobs() {
  const rows = await db.$queryRaw<{ payload: { approvalId?: string; writeBackId?: string } }[]>`
    SELECT j.payload FROM graphile_worker._private_jobs j JOIN graphile_worker._private_tasks t ON t.id = j.task_id WHERE t.identifier = 'writeback.execute'`;
  return rows.map((r) => r.payload);
}

async function countAllTables(): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (const model of Object.values(Prisma.ModelName)) {
    const delegate = (db as unknown as Record<string, { count: () => Promise<number> }>)[model.charAt(0).toLowerCase() + model.slice(1)];
    if (!delegate) throw new Error(`no delegate for ${model}`);
    counts[model] = await delegate.count();
  }
  return counts;
}

let dataDir: string;

describe("demo seed", () => {
  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), "airlock-seed-"));
    await seed(db, { dataDir });
  }, 60_000);
  afterAll(async () => {
    await rm(dataDir, { recursive: true, force: true });
  });

  it("seeds at least 30 runs with a run in every settled RunStatus, and none a worker would pick up", async () => {
    const groups = await db.agentDispatchRun.groupBy({ by: ["status"], _count: { _all: true } });
    const seen = new Set(groups.map((g) => g.status));
    const live: string[] = [RunStatus.queued, RunStatus.running];
    for (const status of Object.values(RunStatus).filter((s) => !live.includes(s))) expect(seen, `a ${status} run`).toContain(status);
    for (const status of live) expect(seen, `no ${status} run`).not.toContain(status);
    expect(groups.reduce((n, g) => n + g._count._all, 0)).toBeGreaterThanOrEqual(30);
    // The worker claims queued attempts and reaps started or running ones whose heartbeat is old.
    expect(await db.dispatchAttempt.count({ where: { status: { in: ["queued", "starting", "running"] } } })).toBe(0);
  });

  it("puts every seeded repository on the local forge, with every commit a row names", async () => {
    const repos = await db.repository.findMany();
    expect(repos.length).toBeGreaterThanOrEqual(3);
    const named = new Map<string, Set<string>>(repos.map((r) => [r.id, new Set<string>()]));
    const add = (repositoryId: string, sha: string | null | undefined) => sha && named.get(repositoryId)!.add(sha);
    for (const p of await db.pullRequest.findMany()) {
      add(p.repositoryId, p.headSha);
      add(p.repositoryId, p.baseSha);
    }
    for (const p of await db.pipeline.findMany()) add(p.repositoryId, p.headSha);
    for (const r of await db.agentDispatchRun.findMany({ include: { approvals: true } })) {
      add(r.repositoryId, r.headSha);
      const bundle = r.contextBundle as { ref?: { sha?: string; pullRequest?: { baseSha?: string | null } | null } };
      add(r.repositoryId, bundle.ref?.sha);
      add(r.repositoryId, bundle.ref?.pullRequest?.baseSha);
      for (const a of r.approvals) add(r.repositoryId, a.targetHeadSha);
    }
    for (const repo of repos) {
      expect(repo.forge, repo.fullName).toBe("local");
      const path = bareRepoPath(dataDir, repo.fullName);
      expect(repo.cloneUrl).toBe(`file://${path}`);
      expect(await resolveRevision(path, repo.defaultBranch), `${repo.fullName} ${repo.defaultBranch}`).not.toBeNull();
      for (const sha of named.get(repo.id)!) expect(await resolveRevision(path, sha), `${repo.fullName} ${sha}`).toBe(sha);
    }
    const prs = await db.pullRequest.findMany({ include: { repository: true } });
    for (const pr of prs) {
      const path = bareRepoPath(dataDir, pr.repository.fullName);
      // Every pull request's head is where GitHub keeps it (forks included), and a branch of the repository otherwise.
      expect(await resolveRevision(path, `refs/pull/${pr.number}/head`), `${pr.repository.fullName}#${pr.number}`).toBe(pr.headSha);
      if (!pr.isFork) expect(await resolveRevision(path, `refs/heads/${pr.headRef}`)).toBe(pr.headSha);
    }
    // Release runs name their tag, and the tag is the commit they reviewed.
    for (const run of await db.agentDispatchRun.findMany({ where: { source: "release" }, include: { repository: true } })) {
      const tag = (run.contextBundle as { ref: { tag: string } }).ref.tag;
      expect(await resolveRevision(bareRepoPath(dataDir, run.repository.fullName), `refs/tags/${tag}`)).toBe(run.headSha);
    }
  });

  it("seeds pending patches that apply to the branch head they name", async () => {
    const pending = await db.approvalRequest.findMany({ where: { status: "pending", action: { in: ["push_commits", "update_pr_branch"] } }, include: { artifact: true, run: { include: { repository: true } } } });
    expect(pending.length).toBeGreaterThan(0);
    for (const a of pending) {
      const path = bareRepoPath(dataDir, a.run.repository.fullName);
      expect(await resolveRevision(path, `refs/heads/${a.targetBranch}`), `${a.run.repository.fullName} ${a.targetBranch}`).toBe(a.targetHeadSha);
      const work = await mkdtemp(join(tmpdir(), "airlock-seed-apply-"));
      try {
        await git(["clone", "--quiet", "--branch", a.targetBranch!, path, work]);
        await git(["apply", "--check", "-"], { cwd: work, input: a.artifact!.content! });
      } finally {
        await rm(work, { recursive: true, force: true });
      }
    }
  });

  it("numbers each run's events 1..lastEventSeq without gaps, in time order, all valid catalogue events", async () => {
    const runs = await db.agentDispatchRun.findMany({ select: { id: true, number: true, lastEventSeq: true } });
    const events = await db.runEvent.findMany({ orderBy: [{ runId: "asc" }, { seq: "asc" }], select: { runId: true, seq: true, type: true, payload: true, createdAt: true } });
    for (const run of runs) {
      const mine = events.filter((e) => e.runId === run.id);
      expect(mine.map((e) => e.seq), `run #${run.number}`).toEqual(Array.from({ length: mine.length }, (_, i) => i + 1));
      expect(run.lastEventSeq, `run #${run.number}`).toBe(mine.length);
      for (let i = 1; i < mine.length; i++) expect(mine[i]!.createdAt.getTime()).toBeGreaterThanOrEqual(mine[i - 1]!.createdAt.getTime());
    }
    for (const e of events) {
      const parsed = zRunEventInput.safeParse({ type: e.type, payload: e.payload });
      expect(parsed.success, `${e.type} #${e.seq}: ${parsed.error?.message}`).toBe(true);
    }
  });

  it("stores stack versions whose spec passes zStackSpec, and runs whose snapshot digest matches", async () => {
    const versions = await db.agentStackVersion.findMany({ include: { stack: { select: { name: true } } } });
    expect(versions.length).toBeGreaterThanOrEqual(4);
    for (const v of versions) {
      const spec = zStackSpec.parse(v.spec);
      expect(v.digest).toBe(stackSnapshot({ id: v.stackId, name: v.stack.name, version: v.version, spec }).digest);
    }
    const runs = await db.agentDispatchRun.findMany({ select: { stackSnapshot: true, stackDigest: true, contextBundle: true, contextDigest: true, prompt: true, promptHash: true } });
    for (const r of runs) {
      expect(digestOf(r.stackSnapshot)).toBe(r.stackDigest);
      expect(digestOf(r.contextBundle)).toBe(r.contextDigest);
      expect(r.promptHash).toBe(`sha256:${sha256(r.prompt)}`);
      expect(r.prompt).not.toMatch(/\{\{\s*[\w.]+\s*\}\}/);
    }
  });

  it("stores artifacts whose digest and size match their content, and patches that are well-formed unified diffs", async () => {
    const artifacts = await db.artifact.findMany();
    expect(new Set(artifacts.map((a) => a.kind))).toEqual(new Set(["patch", "diagnosis", "report"]));
    for (const a of artifacts) {
      expect(a.digest).toBe(`sha256:${sha256(a.content ?? "")}`);
      expect(a.sizeBytes).toBe(Buffer.byteLength(a.content ?? "", "utf8"));
    }
    for (const patch of artifacts.filter((a) => a.kind === "patch")) {
      const files = parseDiff(patch.content ?? "");
      expect(files.length).toBeGreaterThan(0);
      for (const chunk of files.flatMap((f) => f.chunks)) {
        expect(chunk.changes.filter((c) => c.type !== "add").length).toBe(chunk.oldLines);
        expect(chunk.changes.filter((c) => c.type !== "del").length).toBe(chunk.newLines);
      }
    }
  });

  it("links approvals, write-backs and attempts consistently", async () => {
    const approvals = await db.approvalRequest.findMany({ include: { artifact: true, writeBack: true } });
    // No "approved": an approved approval's write-back is executed by a job; seeded, it would wait forever.
    expect(new Set(approvals.map((a) => a.status))).toEqual(new Set(["pending", "rejected", "expired", "executed", "failed"]));
    for (const a of approvals) {
      if (a.artifact) expect(a.artifactDigest).toBe(a.artifact.digest);
      if (a.status === "pending") expect(a.expiresAt.getTime()).toBeGreaterThan(Date.now());
      if (a.status === "executed") expect(a.writeBack?.outcome).toBe("succeeded");
      if (a.status === "rejected") expect(a.reason).toBeTruthy();
    }
    const attempts = await db.dispatchAttempt.findMany();
    for (const a of attempts) expect(a.fencingToken).toBe(a.number);
    const fork = await db.agentDispatchRun.findFirst({ where: { isFork: true, runnerPoolId: { not: null } }, include: { attempts: { include: { runnerPool: true } } } });
    expect(fork?.attempts[0]?.runnerPool?.trustTier).toBe("untrusted");
    expect(await db.agentDispatchRun.count({ where: { parentRunId: { not: null } } })).toBeGreaterThan(0);
  });

  it("leaves no write-back waiting for an execution nothing will start: each pending one has its writeback.execute job", async () => {
    const pending = await db.writeBack.findMany({ where: { OR: [{ outcome: "pending" }, { approval: { status: "approved" } }] }, select: { id: true, approvalId: true, outcome: true } });
    const jobs = await executeJobs();
    for (const w of pending) {
      expect(w.outcome, `write-back ${w.id}`).toBe("pending");
      expect(jobs.some((j) => j.writeBackId === w.id || (w.approvalId !== null && j.approvalId === w.approvalId)), `a writeback.execute job for ${w.id}`).toBe(true);
    }
    // An approved approval always has its write-back row (written with the decision).
    expect(await db.approvalRequest.count({ where: { status: "approved", writeBack: null } })).toBe(0);
  });

  it("freezes every approval's presented record in the real request's shape (zPresented)", async () => {
    const approvals = await db.approvalRequest.findMany({ include: { run: { select: { repository: { select: { fullName: true } } } } } });
    for (const a of approvals) {
      const parsed = zPresented.safeParse(a.presented);
      expect(parsed.success, `${a.action} ${a.id}: ${parsed.error?.message}`).toBe(true);
      const p = parsed.data!;
      expect(p.action).toBe(a.action);
      expect(p.target.repository).toBe(a.run.repository.fullName);
      expect(p.contextLabels.length).toBeGreaterThan(0);
      expect(stackLine(p.stack)).not.toMatch(/\?/);
    }
  });

  it("gives every seeded approval the change gate's stored decision, as a live request gets", async () => {
    const approvals = await db.approvalRequest.findMany({ include: { policyDecision: { include: { policyVersion: { include: { policy: true } } } } } });
    for (const a of approvals) {
      expect(a.policyDecision, `${a.action} ${a.id}`).not.toBeNull();
      expect(a.policyDecision!.runId).toBe(a.runId);
      expect(a.policyDecision!.policyVersion.policy.kind).toBe("change_gate");
      expect(a.policyDecision!.facts).toMatchObject({ kind: expect.objectContaining({ value: a.action }) });
    }
  });

  it("renders a seeded release approval as a reader would want it: names, a tag, the report as a report", async () => {
    const a = await db.approvalRequest.findFirstOrThrow({ where: { action: "publish_release", status: "pending" }, include: { artifact: true } });
    const p = zPresented.parse(a.presented);
    expect(targetLine(p, a)).toBe(`${p.target.repository} · tag ${a.targetBranch}`);
    const html = renderToStaticMarkup(createElement(PresentedSections, { approval: a, presented: p }));
    expect(html).not.toContain("[object Object]");
    expect(html).not.toContain("not a unified diff");
    expect(html).not.toMatch(/· \?/);
    // The readiness report is Markdown: its heading and table render as such.
    expect(a.artifact?.kind).toBe("report");
    expect(html).toMatch(/>Release readiness: [^<]+</);
    expect(html).not.toContain("# Release readiness");
    expect(html).toContain("<table");
    for (const label of p.contextLabels) expect(html).toContain(label);
  });

  it("escalates the PR #236 fix loop at its bound through the loop's code: digest, label flip at the gate, a notification", async () => {
    const repo = await db.repository.findUniqueOrThrow({ where: { fullName: "acme/web-console" } });
    const state = await db.fixLoopState.findUniqueOrThrow({ where: { repositoryId_branch: { repositoryId: repo.id, branch: "renovate/node-22.x" } } });
    expect(state.escalatedAt).not.toBeNull();
    expect(state.escalationDigest).toContain("### Round 2");
    expect(state.escalationDigest).toContain("Same mismatch, now with a pinned digest");
    const intents = await db.fixSpawnIntent.findMany({ where: { repositoryId: repo.id, branch: "renovate/node-22.x" }, orderBy: { createdAt: "asc" } });
    expect(intents.map((i) => [i.kind, i.outcome])).toEqual([["fix", "launched"], ["fix", "launched"], ["escalate", "launched"]]);
    // Each fix run the loop records exists, and its parent is the run whose patch was rejected.
    for (const i of intents.filter((x) => x.kind === "fix")) {
      const fix = await db.agentDispatchRun.findUniqueOrThrow({ where: { id: i.runId! } });
      expect(fix.parentRunId).toBe(i.parentRunId);
      expect(fix.source).toBe("review");
    }
    // The label flip waits for a person.
    const flip = await db.approvalRequest.findFirstOrThrow({ where: { action: "set_labels", run: { repositoryId: repo.id } } });
    expect(flip.status).toBe("pending");
    expect(JSON.stringify(flip.presented)).toContain("ready-for-human");
    const author = await db.agentDispatchRun.findUniqueOrThrow({ where: { id: intents.at(-1)!.parentRunId! } });
    expect(author.title).toBe("Fix 2/2 after rejection: Repair build-image on PR #236 (node 22 base image)");
    const digest = {
      writeBacks: await db.writeBack.findMany({ where: { kind: "comment", runId: author.id }, select: { approvalId: true, outcome: true } }),
      approvals: await db.approvalRequest.count({ where: { action: "comment", runId: author.id } }),
    };
    // The gate decides the digest comment (here it asks a person, as for the flip): never a bare write.
    expect(digest.writeBacks.length + digest.approvals).toBe(1);
    const n = await db.notification.findMany({ where: { kind: "fix_loop_escalated" } });
    expect(n).toHaveLength(1);
    // A page that exists: the run whose fix loop it is (the run view shows the loop).
    expect(n[0]!.href).toBe(`/runs/${author.id}`);
  });

  it("attributes the red checks of PR #231 by the attribution policy: lint pre-existing, e2e ours", async () => {
    const decisions = await db.policyDecision.findMany({ where: { policyVersion: { policy: { kind: "attribution" } } }, include: { run: { select: { title: true } } } });
    const byCheck = Object.fromEntries(decisions.map((d) => [d.subject.split("|")[1], { value: d.value, rule: d.ruleName, run: d.run?.title }]));
    expect(byCheck).toEqual({
      "CI / lint": { value: "pre_existing", rule: "already_red_before_us", run: "Fix failing lint on PR #231 (new head)" },
      "CI / e2e": { value: "ours", rule: "our_edits_after_green", run: "Fix failing lint on PR #231 (new head)" },
    });
  });

  it("finds each scene of the first-run story among the seeded records, and says plainly which are absent", async () => {
    const { scenes } = await demoStory({ db, repositoryIds: "all" });
    const by = Object.fromEntries(scenes.map((s) => [s.key, s]));
    expect(Object.keys(by)).toEqual(["loop", "fork", "escalation", "attribution", "flaky", "privileged", "cost_cap"]);
    // The fork PR run sits on the untrusted pool; the escalation links its runs, the flip and the inbox.
    expect(by.fork!.summary).toMatch(/untrusted/);
    expect(by.escalation!.links.map((l) => l.label)).toEqual([expect.stringMatching(/the first rejected patch$/), expect.stringMatching(/the loop and its digest$/), "Approve the label flip", "Notifications"]);
    expect(by.attribution!.links.map((l) => l.label.split(":")[0])).toEqual(["Ours", "Pre-existing"]);
    // Every link goes to a run, an approval or the inbox that exists.
    for (const s of scenes)
      for (const l of s.links) {
        const [, kind, id] = l.href.split("/");
        if (kind === "runs") expect(await db.agentDispatchRun.count({ where: { id } }), l.href).toBe(1);
        else if (kind === "approvals") expect(await db.approvalRequest.count({ where: { id } }), l.href).toBe(1);
        else expect(l.href).toBe("/notifications");
      }
    // A reader sees only their repositories' scenes: no repository, no links.
    const none = await demoStory({ db, repositoryIds: [] });
    expect(none.scenes.flatMap((s) => s.links)).toEqual([]);
  });

  it("names only local-forge objects in seeded write-backs: nothing points at github.com", async () => {
    const rows = await db.writeBack.findMany({ where: { externalRef: { not: null } }, select: { externalRef: true } });
    expect(rows.length).toBeGreaterThan(0);
    expect(rows.map((r) => r.externalRef).filter((ref) => /github\.com/i.test(ref ?? ""))).toEqual([]);
    const events = await db.runEvent.count({ where: { type: "write_back_completed", payload: { path: ["externalRef"], string_contains: "github.com" } } });
    expect(events).toBe(0);
  });

  it("gives each demo user a credential account that verifies the demo password", async () => {
    for (const login of demoLogins) {
      const user = await db.user.findUniqueOrThrow({ where: { email: login.email }, include: { accounts: true } });
      const credential = user.accounts.find((a) => a.providerId === "credential");
      expect(credential?.accountId).toBe(user.id);
      expect(await verifyPassword({ hash: credential!.password!, password: login.password })).toBe(true);
    }
  });

  it("adds nothing when run again, even days later", async () => {
    const before = await countAllTables();
    const again = await seed(db, { dataDir, now: new Date(Date.now() + 3 * 24 * 3600_000) });
    expect(again.runsCreated).toBe(0);
    expect(await countAllTables()).toEqual(before);
  });

  // What an executed write-back names is on the local forge, found the way a reconciling executor
  // finds it (by its key): the comments' notes and the published release.
  it("names notes and releases that exist on the local forge", async () => {
    const forge = createLocalForge({ db, dataDir, ciTimeoutMs: 60_000 });
    const done = await db.writeBack.findMany({ where: { kind: { in: ["comment", "publish_release"] }, outcome: "succeeded" }, include: { run: { include: { repository: true } } } });
    expect(done.map((w) => w.kind).sort()).toEqual(["comment", "comment", "comment", "comment", "comment", "publish_release"]);
    for (const w of done) {
      const target = w.target as { prNumber?: number; branch?: string; release?: { tag: string } };
      const req = { kind: w.kind, idempotencyKey: w.idempotencyKey, runId: w.runId, approvalId: w.approvalId, message: "", target: { repository: w.run.repository.fullName, prNumber: target.prNumber }, ...(target.release ? { release: target.release } : {}) } as ForgeWriteBackRequest;
      expect((await forge.findWriteBack(req))?.externalRef, `${w.kind} of run #${w.run.number}`).toBe(w.externalRef);
    }
  });

  it("publishes the pending release offline when a maintainer approves it: the tag the release workflow ran on, at its commit", async () => {
    const a = await db.approvalRequest.findFirstOrThrow({ where: { action: "publish_release", status: "pending" }, include: { run: { include: { repository: true } } } });
    const m = demoUsers.maintainer;
    await callerFor({ id: m.id, email: m.email, name: m.name, isAdmin: m.isAdmin }).approvals.approve({ approvalId: a.id, artifactDigest: a.artifactDigest, headSha: a.targetHeadSha });
    const res = await executeWriteBack({ db, forgeFor: localForgeFor(dataDir), approvalId: a.id });
    expect(res).toMatchObject({ outcome: "succeeded", externalRef: `release ${a.targetBranch}` });
    const tagged = (await git(["--git-dir", bareRepoPath(dataDir, a.run.repository.fullName), "rev-parse", `refs/tags/${a.targetBranch}^{commit}`])).trim();
    expect(tagged).toBe(a.run.headSha);
    expect((await listLocalReleases(dataDir, a.run.repository.fullName)).map((r) => r.tag).sort()).toEqual(["v2.13.2", "v2.14.0"]);
  });

  it("pushes the PR #231 repair's pending patch onto settings-rsc on the local forge once when a maintainer approves it", async () => {
    const run = await db.agentDispatchRun.findFirstOrThrow({ where: { title: "Fix failing lint on PR #231 (new head)" }, include: { repository: true, approvals: true } });
    expect(run.status).toBe("awaiting_approval");
    expect(run.approvals.map((a) => [a.action, a.status])).toEqual([["push_commits", "pending"]]);
    const a = run.approvals[0]!;
    const path = bareRepoPath(dataDir, run.repository.fullName);
    expect(await resolveRevision(path, "refs/heads/settings-rsc")).toBe(a.targetHeadSha);

    const m = demoUsers.maintainer;
    await callerFor({ id: m.id, email: m.email, name: m.name, isAdmin: m.isAdmin }).approvals.approve({ approvalId: a.id, artifactDigest: a.artifactDigest, headSha: a.targetHeadSha });
    // The decision queues the execution (what the worker runs), as for any live approval.
    expect((await executeJobs()).filter((j) => j.approvalId === a.id)).toHaveLength(1);
    const [first, again] = [await executeWriteBack({ db, forgeFor: localForgeFor(dataDir), approvalId: a.id }), await executeWriteBack({ db, forgeFor: localForgeFor(dataDir), approvalId: a.id })];
    expect(first.outcome).toBe("succeeded");
    expect(again).toMatchObject({ outcome: "already_recorded", externalRef: first.externalRef });

    // The commit is the branch's new head, on top of the head the approver saw, and it is there once.
    const sha = first.externalRef!;
    expect(await resolveRevision(path, "refs/heads/settings-rsc")).toBe(sha);
    expect((await git(["--git-dir", path, "rev-parse", `${sha}^`])).trim()).toBe(a.targetHeadSha);
    const wb = await db.writeBack.findUniqueOrThrow({ where: { approvalId: a.id } });
    const pushed = (await git(["--git-dir", path, "log", "--all", "--fixed-strings", `--grep=${wb.idempotencyKey}`, "--format=%H"])).split("\n").filter(Boolean);
    expect(pushed).toEqual([sha]);
    expect(await db.approvalRequest.findUniqueOrThrow({ where: { id: a.id } })).toMatchObject({ status: "executed" });
  });
});
