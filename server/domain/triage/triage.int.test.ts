// Triage in the loop against a real database and a real local CI: each disposition's action
// (rerun through the forge, the trigger rules' run, a notification, a roll-back request), and
// redelivery of the same failure deciding and acting nothing twice.
import { mkdir, rm, writeFile } from "node:fs/promises";
import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import { dirname, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

process.env.GITHUB_WEBHOOK_SECRET = "webhook-secret-for-triage-tests";

const { getDb } = await import("@/server/db");
const { createRepository } = await import("@/server/testing/factories");
const { createRule, createStack, sha } = await import("@/server/domain/ingest/fixtures/world");
const { failedCheckRun, failedWorkflowJob } = await import("@/server/domain/ingest/fixtures/deliveries");
const { LOGS, localFailedCheck } = await import("@/server/domain/ingest/fixtures/local-events");
const { deliver, evaluateAll, post } = await import("@/server/domain/evaluation/fixtures/harness");
const { ingestCiEvent } = await import("@/server/domain/ingest/delivery/ingest-ci-event");
const { evaluateDelivery } = await import("@/server/domain/evaluation/evaluate");
const { runLocalCheck } = await import("@/server/forges/local/local-ci");
const { commitFiles } = await import("@/server/forges/local/repositories");
const { createLocalRepository, testWorkerContext } = await import("@/server/queue/testing/fixtures");
const { runCheckTask } = await import("@/server/queue/tasks/run-check");
const { performTriageRerun } = await import("./rerun");

const db = getDb();
let stackId = "";
beforeAll(async () => {
  stackId = (await createStack(db)).id;
});

const jobsOf = async (identifier: string, key: string, value: string) => {
  const rows = await db.$queryRaw<{ payload: Record<string, string> }[]>`
    SELECT j.payload FROM graphile_worker._private_jobs j JOIN graphile_worker._private_tasks t ON t.id = j.task_id
    WHERE t.identifier = ${identifier} AND j.payload->>${key} = ${value}`;
  return rows.map((r) => r.payload);
};

describe("rerun once", () => {
  // Under the project, which the check's sandbox sees read-only (not the host's /tmp).
  const flag = join(process.cwd(), "node_modules", ".cache", `airlock-triage-flag-${process.pid}-${Date.now()}`);
  beforeAll(() => mkdir(dirname(flag), { recursive: true }));
  afterAll(async () => {
    await rm(flag, { force: true });
  });

  it("reruns a known-flaky failure on the local CI: one new Pipeline, no agent run, and the rerun's failure escalates", { timeout: 60_000 }, async () => {
    // A check that fails while the flag file exists: the same failure, on and off, like a flaky test.
    const checkCommand = `if [ -f ${flag} ]; then echo "FAIL src/sum.test.ts > sum > adds"; echo "AssertionError: expected 3 to be 6"; exit 1; fi; echo ok`;
    const local = await createLocalRepository({ files: { "README.md": "flaky\n" }, checkCommand });
    const { repository, dataDir } = local;
    await createRule(db, { kind: "failed_check", stackId, repositoryId: repository.id, workflow: "local-ci" });
    const check = (sha?: string) => runLocalCheck({ db, dataDir, repositoryId: repository.id, sha, timeoutMs: 20_000 });

    // History: at commit A the check failed and then passed.
    await writeFile(flag, "1");
    const failedA = await check(local.sha);
    expect(failedA.conclusion).toBe("failure");
    const first = await evaluateDelivery({ db, deliveryId: failedA.delivery!.deliveryId });
    expect(first.detail).toContain("triage fix_forward");
    await rm(flag);
    expect((await check(local.sha)).conclusion).toBe("success");
    const runsBefore = await db.agentDispatchRun.count({ where: { repositoryId: repository.id } });

    // Commit B fails the same way: the signature is known flaky, so triage reruns it.
    const shaB = await commitFiles({ repoPath: local.repoPath, branch: "main", files: { "README.md": "flaky B\n" }, message: "B" });
    await writeFile(flag, "1");
    const failedB = await check(shaB);
    expect(failedB.failureSignature).toBe(failedA.failureSignature);
    const evaluated = await evaluateDelivery({ db, deliveryId: failedB.delivery!.deliveryId });
    expect(evaluated.created).toEqual([]);
    const triage = await db.triageDecision.findFirstOrThrow({ where: { pipelineId: failedB.pipelineId }, include: { policyDecision: true } });
    expect(triage).toMatchObject({ disposition: "rerun_once", action: "rerun_check", actionStatus: "requested", headSha: shaB, runId: null });
    expect(triage.policyDecision).toMatchObject({ ruleName: "flaky_test_gets_one_rerun", value: "rerun_once" });
    expect(triage.policyDecision!.facts).toEqual({
      failing_stage: { value: "test", source: "system" },
      known_flaky: { value: true, source: "system" },
      prior_reruns: { value: 0, source: "system" },
    });
    const reruns = await jobsOf("ci.run", "sha", shaB);
    expect(reruns).toEqual([{ repositoryId: repository.id, sha: shaB, branch: "main" }]);
    expect(await db.triggerDrop.count({ where: { deliveryId: failedB.delivery!.deliveryId, reason: { startsWith: "held by triage: rerun_once" } } })).toBe(1);

    // A redelivery of the same failure (another delivery id) decides and reruns nothing again.
    const again = await ingestCiEvent({ db, event: localFailedCheck({ repo: repository.fullName, headSha: shaB, headBranch: "main", runId: failedB.externalId, jobId: `${failedB.externalId}-1`, workflowName: "local-ci" }) });
    await evaluateDelivery({ db, deliveryId: again.deliveryId });
    expect(await db.triageDecision.count({ where: { pipelineId: failedB.pipelineId } })).toBe(1);
    expect(await jobsOf("ci.run", "sha", shaB)).toHaveLength(1);
    expect(await db.agentDispatchRun.count({ where: { repositoryId: repository.id } })).toBe(runsBefore);

    // The worker runs the queued rerun: exactly one new Pipeline at B, and still no run.
    const pipelinesBefore = await db.pipeline.count({ where: { repositoryId: repository.id, headSha: shaB } });
    await runCheckTask(reruns[0], testWorkerContext({ dataDir, ciTimeoutMs: 20_000 }));
    expect(await db.pipeline.count({ where: { repositoryId: repository.id, headSha: shaB } })).toBe(pipelinesBefore + 1);
    expect(await db.agentDispatchRun.count({ where: { repositoryId: repository.id } })).toBe(runsBefore);

    // It failed again: reproduced on rerun, so the owner is told, once.
    const rerunPipeline = await db.pipeline.findFirstOrThrow({ where: { repositoryId: repository.id, headSha: shaB }, orderBy: { createdAt: "desc" } });
    const delivery = await db.webhookDelivery.findUniqueOrThrow({ where: { deliveryId: `local-ci-${rerunPipeline.id}` } });
    await evaluateDelivery({ db, deliveryId: delivery.deliveryId });
    const escalated = await db.triageDecision.findFirstOrThrow({ where: { pipelineId: rerunPipeline.id }, include: { policyDecision: true } });
    expect(escalated).toMatchObject({ disposition: "escalate_to_owner", action: "notify_owner", actionStatus: "done" });
    expect(escalated.policyDecision).toMatchObject({ ruleName: "flaky_failure_reproduced_escalates" });
    expect(escalated.policyDecision!.facts).toMatchObject({ prior_reruns: { value: 1, source: "system" }, reproduces_on_rerun: { value: true, source: "system" } });
    expect(await db.notification.count({ where: { repositoryId: repository.id, kind: "triage_escalated" } })).toBe(1);
    // Never a second rerun at this head.
    expect(await jobsOf("ci.run", "sha", shaB)).toHaveLength(1);
  });
});

describe("fix forward", () => {
  it("dispatches one repair run through the trigger rule's stack and links the decision to it; a redelivery adds nothing", async () => {
    const repository = await createRepository();
    await db.repository.update({ where: { id: repository.id }, data: { autoRunOnFailedCheck: true } });
    const rule = await createRule(db, { kind: "failed_check", stackId, repositoryId: repository.id, taskKind: "repair", action: "auto_run" });
    const event = localFailedCheck({ repo: repository.fullName, headSha: sha("fix-forward"), headBranch: "feature/dates", runId: "ci-ff-1" });
    const ids = await Promise.all(
      Array.from({ length: 5 }, async () => (await ingestCiEvent({ db, event, log: LOGS.vitestA })).deliveryId),
    );
    await evaluateAll(db, ids);

    const runs = await db.agentDispatchRun.findMany({ where: { repositoryId: repository.id } });
    expect(runs).toHaveLength(1);
    expect(runs[0]).toMatchObject({ taskKind: "repair", status: "queued", triggerRuleId: rule.id, stackId });
    const triage = await db.triageDecision.findMany({ where: { repositoryId: repository.id }, include: { policyDecision: true } });
    expect(triage).toHaveLength(1);
    expect(triage[0]).toMatchObject({ disposition: "fix_forward", action: "dispatch_runs", runId: runs[0]!.id });
    expect(triage[0]!.policyDecision).toMatchObject({ ruleName: "deterministic_failure_fixes_forward", runId: runs[0]!.id });
    expect(await db.policyDecision.count({ where: { subject: { startsWith: `pipeline:${triage[0]!.pipelineId}` } } })).toBe(1);
  });
});

describe("escalate and roll back", () => {
  it("escalates an unclassified GitHub failure with one notification under a redelivery storm", async () => {
    const repository = await createRepository();
    await createRule(db, { kind: "failed_check", stackId, repositoryId: repository.id });
    // workflow_job carries no log: no signature, so nobody can say whether it is flaky.
    const failure = failedWorkflowJob({ repo: repository.fullName, runId: 9101, jobId: 910101, jobName: "unit-tests", step: "Run vitest", headSha: sha("esc"), headBranch: "renovate/node-22.x" });
    const posted = await Promise.all(Array.from({ length: 8 }, (_, i) => post(failure, `triage-esc-${repository.id}-${i}`)));
    await evaluateAll(db, posted.map((p) => p.deliveryId));

    const triage = await db.triageDecision.findMany({ where: { repositoryId: repository.id }, include: { policyDecision: true } });
    expect(triage).toHaveLength(1);
    expect(triage[0]).toMatchObject({ disposition: "escalate_to_owner", action: "notify_owner", actionStatus: "done" });
    expect(triage[0]!.policyDecision).toMatchObject({ ruleName: "unclassified_failure_escalates" });
    expect(triage[0]!.policyDecision!.facts).toEqual({ failing_stage: { value: "test", source: "webhook" }, prior_reruns: { value: 0, source: "system" } });
    const notes = await db.notification.findMany({ where: { repositoryId: repository.id } });
    expect(notes).toHaveLength(1);
    expect(notes[0]).toMatchObject({ kind: "triage_escalated", dedupeKey: `triage:${triage[0]!.id}` });
    // The suggestion is still made (a person decides), and linked to the decision.
    const runs = await db.agentDispatchRun.findMany({ where: { repositoryId: repository.id } });
    expect(runs).toHaveLength(1);
    expect(triage[0]!.runId).toBe(runs[0]!.id);
  });

  it("turns a failed deploy into a roll-back request waiting for a person, with one notification", async () => {
    const repository = await createRepository();
    const failure = failedWorkflowJob({ repo: repository.fullName, runId: 9201, jobId: 920101, jobName: "deploy-production", step: "Deploy", headSha: sha("deploy"), headBranch: "main", workflowName: "Deploy" });
    await deliver(db, failure);
    await deliver(db, failure);
    const triage = await db.triageDecision.findMany({ where: { repositoryId: repository.id }, include: { policyDecision: true } });
    expect(triage).toHaveLength(1);
    expect(triage[0]).toMatchObject({ disposition: "roll_back", action: "roll_back_request", actionStatus: "awaiting_approval" });
    expect(triage[0]!.policyDecision).toMatchObject({ ruleName: "deploy_failure_rolls_back" });
    const notes = await db.notification.findMany({ where: { repositoryId: repository.id } });
    expect(notes.map((n) => n.kind)).toEqual(["triage_rollback"]);
  });

  it("triages each external check run of one suite on its own, so a re-requested check that fails again is decided again", async () => {
    const repository = await createRepository();
    const check = (checkRunId: number) =>
      failedCheckRun({ repo: repository.fullName, suiteId: 9401, checkRunId, name: "lint", headSha: sha("suite"), headBranch: "main", appName: "Buildkite" });
    await deliver(db, check(940101));
    await deliver(db, check(940101));
    await deliver(db, check(940102));
    const triage = await db.triageDecision.findMany({ where: { repositoryId: repository.id }, orderBy: { createdAt: "asc" }, include: { policyDecision: true } });
    expect(triage).toHaveLength(2);
    expect(new Set(triage.map((t) => t.pipelineId)).size).toBe(1);
    // The second check run is a rerun of the first: it counts.
    expect(triage[1]!.policyDecision!.facts).toMatchObject({ failing_stage: { value: "lint" }, prior_reruns: { value: 1 } });
  });

  it("fails closed when no stage can be named: escalated with the refusal, no decision stored", async () => {
    const repository = await createRepository();
    const failure = failedWorkflowJob({ repo: repository.fullName, runId: 9301, jobId: 930101, jobName: "matrix-7", step: "Step 3", headSha: sha("unknown-stage"), headBranch: "main", workflowName: "Nightly" });
    await deliver(db, failure);
    const triage = await db.triageDecision.findFirstOrThrow({ where: { repositoryId: repository.id } });
    expect(triage).toMatchObject({ disposition: "escalate_to_owner", action: "notify_owner", policyDecisionId: null });
    expect(triage.refusal).toContain("failing_stage is required");
    expect(await db.notification.count({ where: { repositoryId: repository.id } })).toBe(1);
  });
});

describe("GitHub rerun", () => {
  it("asks GitHub to rerun the workflow run's failed jobs once, and records GitHub's refusal as the outcome", async () => {
    const requests: { method: string; url: string; auth: string }[] = [];
    let answer = 201;
    const server = createServer((req: IncomingMessage, res) => {
      requests.push({ method: req.method ?? "", url: req.url ?? "", auth: req.headers.authorization ?? "" });
      res.writeHead(answer, { "content-type": "application/json" });
      res.end(answer === 201 ? "{}" : JSON.stringify({ message: "This workflow is already running" }));
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      const repository = await db.repository.update({ where: { id: (await createRepository()).id }, data: { forge: "github" } });
      const pipeline = await db.pipeline.create({ data: { repositoryId: repository.id, workflowName: "CI", checkName: "CI / test", externalId: "555", status: "completed", conclusion: "failure", headSha: sha("gh") } });
      const make = (n: number) =>
        db.triageDecision.create({
          data: { key: `t-${pipeline.id}-${n}`, repositoryId: repository.id, pipelineId: pipeline.id, headSha: pipeline.headSha, disposition: "rerun_once", action: "rerun_check", actionStatus: "pending", rerunKey: `r-${pipeline.id}-${n}`, rerunVia: "workflow_job", rerunExternalId: "555" },
        });
      const settings = { githubToken: "ghs_test_token", githubApiUrl: baseUrl };
      const triage = await make(1);
      expect((await performTriageRerun({ db, triageId: triage.id, settings })).status).toBe("requested");
      expect((await performTriageRerun({ db, triageId: triage.id, settings })).status).toBe("requested");
      expect(requests).toEqual([{ method: "POST", url: `/repos/${repository.fullName}/actions/runs/555/rerun-failed-jobs`, auth: "token ghs_test_token" }]);

      answer = 403;
      const refused = await make(2);
      const result = await performTriageRerun({ db, triageId: refused.id, settings });
      expect(result.status).toBe("failed");
      const failed = await db.triageDecision.findUniqueOrThrow({ where: { id: refused.id } });
      expect(failed.actionDetail).toContain("already running");
      // Nobody is left without a decision: the owners are told the rerun did not happen, once.
      expect(await performTriageRerun({ db, triageId: refused.id, settings })).toMatchObject({ status: "failed" });
      const notes = await db.notification.findMany({ where: { repositoryId: repository.id } });
      expect(notes).toHaveLength(1);
      expect(notes[0]).toMatchObject({ kind: "triage_escalated", id: failed.notificationId });
      expect(requests).toHaveLength(2);
    } finally {
      server.close();
    }
  });
});
