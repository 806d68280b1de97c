import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getDb } from "@/server/db";
import type { FailedCheckEvent } from "@/server/domain/ci-events/ci-event";
import { reevaluateDelivery } from "@/server/domain/deliveries/reevaluate";
import { evaluateDelivery } from "@/server/domain/evaluation/evaluate";
import { ingestCiEvent } from "@/server/domain/ingest/delivery/ingest-ci-event";
import { claimNextAttempt } from "@/server/domain/run-engine/claim-attempt";
import { createUser } from "@/server/testing/factories";
import { createStack, scriptedSpec } from "@/server/queue/testing/fixtures";
import { seed } from "@/prisma/seed";
import { SHA } from "@/prisma/seed/forge";
import { REPO } from "@/prisma/seed/repos";
import { git } from "./git";
import { runLocalCheck } from "./local-ci";
import { bareRepoPath } from "./repositories";

// Trust from where the code comes from, on the local forge, with the seeded demo: its real bare
// repositories (fork heads only under refs/pull/<n>/head), its pull request records and its
// runner pools, through the local CI, the trigger path and the real claim (admission). A fork's
// pull request head must land on the untrusted sandbox pool whatever branch name the check was
// asked for; a commit on the repository's main runs trusted, as the repository's tier says.

const db = getDb();
let dataDir = "";
let repositoryId = "";

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), "airlock-fork-origin-"));
  await seed(db, { dataDir });
  const repo = await db.repository.update({
    where: { fullName: REPO.payments },
    // A check that fails fast, with a failure the signature can name.
    data: { checkCommand: "echo 'FAIL services/api/src/money/round.test.ts > rounds JPY' && exit 1" },
  });
  repositoryId = repo.id;
  // Only this file's rule: the seeded ones have their own workflows and stacks.
  await db.triggerRule.updateMany({ data: { enabled: false } });
  const stack = await createStack(scriptedSpec());
  await db.triggerRule.create({
    data: { name: "local CI diagnosis", kind: "failed_check", repositoryId, workflow: "local-ci", stackId: stack.id, taskKind: "diagnose", action: "auto_run" },
  });
}, 120_000);
afterAll(async () => {
  await rm(dataDir, { recursive: true, force: true });
});

async function checkAndEvaluate(opts: { sha?: string; branch?: string }) {
  const check = await runLocalCheck({ db, dataDir, repositoryId, ...opts, timeoutMs: 30_000 });
  expect(check.conclusion).toBe("failure");
  const result = await evaluateDelivery({ db, deliveryId: check.delivery!.deliveryId });
  return { check, result };
}

async function admit(runId: string) {
  const claim = await claimNextAttempt({ db, runId, workerRef: "test", kubernetesAvailable: false, sandbox: { available: true, reason: null } });
  if (claim.kind !== "started") throw new Error(`claim ${claim.kind}: ${claim.reason}`);
  return claim;
}

describe("local forge: trust from where the code comes from", () => {
  it("runs the fork pull request's head on the untrusted sandbox, even when the check is asked for on main", async () => {
    const pr = await db.pullRequest.findUniqueOrThrow({ where: { repositoryId_number: { repositoryId, number: 415 } } });
    expect(pr).toMatchObject({ isFork: true, headSha: SHA.pay415 });
    // The fork's head is only under its pull request: no branch of the repository holds it.
    expect(await git(["--git-dir", bareRepoPath(dataDir, REPO.payments), "for-each-ref", "--contains", SHA.pay415, "refs/heads/"])).toBe("");

    const { check, result } = await checkAndEvaluate({ sha: SHA.pay415, branch: "main" });
    expect(result.created).toHaveLength(1);
    const run = await db.agentDispatchRun.findUniqueOrThrow({ where: { id: result.created[0]!.runId } });
    expect(run).toMatchObject({ isFork: true, origin: "fork", pullRequestId: pr.id, headSha: SHA.pay415 });
    expect(run.originReason).toBe("pull request #415 comes from the fork jdoe-contrib/payments-api");
    expect((run.contextBundle as { ref: { isFork: boolean | null } }).ref.isFork).toBe(true);
    // The pipeline names the fork's head ref, not the "main" the check was asked for.
    expect(await db.pipeline.findUniqueOrThrow({ where: { id: check.pipelineId } })).toMatchObject({ headBranch: "fix/zero-decimal-rounding", pullRequestId: pr.id });

    const claim = await admit(run.id);
    expect(claim.pool.name).toBe("untrusted-sandbox");
    expect(claim.admission).toMatchObject({ privilegedCredentials: false, runtimeServiceAccount: { privileged: false } });
    expect(claim.admission.pool).toMatchObject({ trustTier: "untrusted" });
  });

  it("keeps the fork's head untrusted when asked for by its pull request ref", async () => {
    const { result } = await checkAndEvaluate({ branch: "pull/415/head" });
    // The same failure at the same commit is the run above: a duplicate, and still a fork's.
    expect(result).toMatchObject({ outcome: "duplicate", created: [] });
    const runs = await db.agentDispatchRun.findMany({ where: { repositoryId, headSha: SHA.pay415, triggerRule: { name: "local CI diagnosis" } } });
    expect(runs.map((r) => [r.origin, r.isFork])).toEqual([["fork", true]]);
  });

  it("runs a push to main of the trusted repository trusted, on the trusted pool, and says why", async () => {
    const { result } = await checkAndEvaluate({});
    expect(result.created).toHaveLength(1);
    const run = await db.agentDispatchRun.findUniqueOrThrow({ where: { id: result.created[0]!.runId } });
    expect(run).toMatchObject({ isFork: false, origin: "repository", headSha: SHA.payMain });
    expect(run.originReason).toBe(`${SHA.payMain.slice(0, 12)} is on the repository's branch main in the local forge`);
    const claim = await admit(run.id);
    expect(claim.pool.name).toBe("trusted-readonly");
    expect(claim.admission.pool).toMatchObject({ trustTier: "trusted" });
  });

  it("keeps a commit no branch holds and no pull request places untrusted (unknown origin)", async () => {
    // A commit only a stray ref points at: not a branch, not a pull request on record.
    const path = bareRepoPath(dataDir, REPO.payments);
    const tree = (await git(["--git-dir", path, "rev-parse", `${SHA.payMain}^{tree}`])).trim();
    const stray = (await git(["--git-dir", path, "commit-tree", tree, "-p", SHA.payMain, "-m", "stray"])).trim();
    await git(["--git-dir", path, "update-ref", "refs/stray/one", stray]);
    const { result } = await checkAndEvaluate({ sha: stray, branch: "main" });
    expect(result.created).toHaveLength(1);
    const run = await db.agentDispatchRun.findUniqueOrThrow({ where: { id: result.created[0]!.runId } });
    expect(run).toMatchObject({ isFork: true, origin: "unknown", headSha: stray });
    expect(run.originReason).toContain("no branch of the repository holds");
    expect((await admit(run.id)).pool.name).toBe("untrusted-sandbox");
  });

  it("adds no run and no decision when the same failure is delivered again or its delivery is re-evaluated", async () => {
    const { check } = await checkAndEvaluate({ sha: SHA.pay415 });
    const decisions = await db.policyDecision.count();
    const runs = await db.agentDispatchRun.count({ where: { repositoryId } });
    // A redelivery: the same event and log under another delivery id (same pipeline, same job).
    const stored = await db.webhookDelivery.findUniqueOrThrow({ where: { deliveryId: check.delivery!.deliveryId } });
    const { ciEvent, log } = stored.payload as { ciEvent: FailedCheckEvent; log: string | null };
    for (let i = 0; i < 2; i++) {
      const again = await ingestCiEvent({ db, event: ciEvent, log });
      expect(await evaluateDelivery({ db, deliveryId: again.deliveryId })).toMatchObject({ outcome: "duplicate", created: [] });
    }
    // Re-evaluated from the deliveries page, twice.
    const admin = await createUser({ isAdmin: true });
    for (let i = 0; i < 2; i++) {
      await reevaluateDelivery({ db, actor: admin, deliveryId: check.delivery!.deliveryId });
      expect(await evaluateDelivery({ db, deliveryId: check.delivery!.deliveryId })).toMatchObject({ outcome: "duplicate", created: [] });
    }
    expect(await db.policyDecision.count()).toBe(decisions);
    expect(await db.agentDispatchRun.count({ where: { repositoryId } })).toBe(runs);
  });
});
