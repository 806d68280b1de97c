import { randomUUID } from "node:crypto";
import { evaluate } from "@/server/domain/policy/evaluate";
import { changeGatePolicy, ciTriagePolicy } from "@/server/domain/policy/shipped";
import type { PolicyDefinition } from "@/server/domain/policy/model";
import { createRun, e2eDb, repositoryOf } from "./db";
import { demoUser, expect, signIn, test } from "./fixtures";

// The run view shows the CI triage decision that led to a run, what triage did about it, and
// the run's other policy decisions, each with its proof tree. The decisions are made by the
// real engine over the shipped policies and stored as decide() stores them (version 1 of each).

type Db = Awaited<ReturnType<typeof e2eDb>>;
let db: Db;
test.beforeAll(async () => {
  db = await e2eDb();
});
test.afterAll(async () => {
  await db?.end();
});

async function storeDecision(runId: string, policy: PolicyDefinition, facts: Parameters<typeof evaluate>[1], subject: string) {
  const { rows } = await db.query<{ id: string; digest: string }>(
    `SELECT v."id", v."digest" FROM "PolicyVersion" v JOIN "Policy" p ON p."id" = v."policyId" WHERE p."kind" = $1 AND v."version" = 1`,
    [policy.kind],
  );
  const version = rows[0]!;
  const decision = evaluate(policy, facts, { version: 1, digest: version.digest });
  const id = `e2e${randomUUID().replaceAll("-", "").slice(0, 20)}`;
  await db.query(
    `INSERT INTO "PolicyDecision" ("id", "policyVersionId", "runId", "subject", "facts", "property", "value", "ruleName", "proof")
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
    [id, version.id, runId, subject, JSON.stringify(decision.facts), decision.property, JSON.stringify(decision.value), decision.rule, JSON.stringify(decision.proof)],
  );
  return id;
}

test("the run view shows the triage decision, its action and its proof tree beside the run's other decisions", async ({ page, baseURL }) => {
  const email = demoUser("user_maintainer").email;
  const repositoryId = await repositoryOf(db, email, "maintainer");
  const runId = await createRun(db, { repositoryId, title: "Repair the failing sum test (triage e2e)", status: "suggested" });
  const pipelineId = `e2e${randomUUID().replaceAll("-", "").slice(0, 20)}`;
  const headSha = "e".repeat(40);
  await db.query(
    `INSERT INTO "Pipeline" ("id", "repositoryId", "workflowName", "checkName", "externalId", "status", "conclusion", "headSha", "headBranch")
     VALUES ($1, $2, 'local-ci', 'local-ci / test', $1, 'completed', 'failure', $3, 'e2e/branch')`,
    [pipelineId, repositoryId, headSha],
  );
  const triageDecisionId = await storeDecision(
    runId,
    ciTriagePolicy,
    { failing_stage: { value: "test", source: "system" }, known_flaky: { value: false, source: "system" }, prior_reruns: { value: 0, source: "system" } },
    `pipeline:${pipelineId}#1`,
  );
  await db.query(
    `INSERT INTO "TriageDecision" ("id", "key", "repositoryId", "pipelineId", "headSha", "policyDecisionId", "disposition", "action", "actionStatus", "actionDetail", "runId", "updatedAt")
     VALUES ($1, $2, $3, $4, $5, $6, 'fix_forward', 'dispatch_runs', 'done', $7, $8, now())`,
    [`e2e-${pipelineId}`, `triage:${pipelineId}#1`, repositoryId, pipelineId, headSha, triageDecisionId, "the failed-check trigger rules dispatch with their stacks (rule deterministic_failure_fixes_forward)", runId],
  );
  await storeDecision(runId, changeGatePolicy, { kind: { value: "publish_release", source: "system" } }, `write_back:e2e-${runId}`);

  await signIn(page, baseURL!, "user_maintainer");
  await page.goto(`/runs/${runId}`);
  const section = page.getByRole("region", { name: "Policy decisions" });
  await expect(section.getByTestId("run-triage")).toContainText("fix forward");
  await expect(section.getByTestId("run-triage")).toContainText("runs dispatched · done");

  // The triage proof is open: the winning rule and each fact it saw, with where it came from.
  const triage = section.getByTestId("decision-ci_triage");
  const triageProof = triage.getByTestId("proof-tree");
  await expect(triageProof).toBeVisible();
  await expect(triageProof).toContainText("disposition = fix_forward");
  await expect(triageProof).toContainText("via deterministic_failure_fixes_forward");
  await expect(triageProof).toContainText("known_flaky");
  await expect(triageProof).toContainText("asserted by the system");

  // The change gate's proof is folded until asked for.
  const gate = section.getByTestId("decision-change_gate");
  await expect(gate.getByTestId("proof-tree")).toBeHidden();
  await gate.getByText("Change gate").click();
  await expect(gate.getByTestId("proof-tree")).toContainText("approval_required = true");
  await expect(gate.getByTestId("proof-tree")).toContainText("via release_publish_needs_a_person");
});
