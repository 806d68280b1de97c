// Stored trigger rules flow through evaluation end to end: for every trigger kind, a delivery
// that matches each of the rule's keys creates a run from that rule, and a delivery that misses
// one key creates none and says which key missed. (The matcher's own table tests cover every
// key in isolation; this proves the rows, the facts and the matcher agree.)
import { beforeAll, describe, expect, it } from "vitest";

process.env.GITHUB_WEBHOOK_SECRET = "webhook-secret-for-trigger-kind-tests";

const { getDb } = await import("@/server/db");
const { createRepository } = await import("@/server/testing/factories");
const { createPullRequest, createRule, createStack, sha } = await import("@/server/domain/ingest/fixtures/world");
const { prComment, pullRequestEvent, releasePublished, tagPush } = await import("@/server/domain/ingest/fixtures/deliveries");
const { LOGS, checkRerun, flakyScan, localFailedCheck, manualRequest } = await import("@/server/domain/ingest/fixtures/local-events");
const { deliver } = await import("./fixtures/harness");
const { ingestCiEvent } = await import("@/server/domain/ingest/delivery/ingest-ci-event");
const { evaluateDelivery } = await import("./evaluate");
const { failureSignature } = await import("@/server/domain/ci-events/failure/failure-signature");

type Repo = Awaited<ReturnType<typeof createRepository>>;
type Result = Awaited<ReturnType<typeof evaluateDelivery>>;

const db = getDb();
let stackId = "";
let otherRepoId = "";
beforeAll(async () => {
  stackId = (await createStack(db)).id;
  otherRepoId = (await createRepository()).id;
});

const local = async (event: Parameters<typeof ingestCiEvent>[0]["event"], extras: { log?: string; changedFiles?: string[] } = {}): Promise<Result> => {
  const { deliveryId } = await ingestCiEvent({ db, event, ...extras });
  return evaluateDelivery({ db, deliveryId });
};

const SIG = failureSignature(LOGS.vitestA, { jobName: "test" }).signature;
const FLAKY = "0123456789abcdef";

type Case = {
  kind: string;
  /** "all keys" (a run) or the key the delivery misses. */
  key: string;
  rule: Record<string, unknown>;
  /** Bind the rule to another repository (the repository key). */
  elsewhere?: boolean;
  run: (repo: Repo, n: string) => Promise<Result>;
  miss?: RegExp;
};

const failedRule = { workflow: "CI", job: "test", step: "Run npm test", branchGlob: "feature/**", pathFilters: ["src/**"], failureSignature: SIG };
const failed = (o: { workflowName?: string; jobName?: string; step?: string; headBranch?: string; files?: string[]; log?: string } = {}) =>
  (repo: Repo, n: string) =>
    local(
      localFailedCheck({ repo: repo.fullName, headSha: sha(n), headBranch: o.headBranch ?? "feature/dates", runId: `ci-${n}`, workflowName: o.workflowName, jobName: o.jobName, step: o.step }),
      { log: o.log ?? LOGS.vitestA, changedFiles: o.files ?? ["src/lib/date.ts"] },
    );

const comment = (o: { headRef?: string; files?: string[] } = {}) => async (repo: Repo, n: string) => {
  await createPullRequest(db, { repositoryId: repo.id, number: 5, headSha: sha(n), headRef: o.headRef ?? "feature/a", isFork: false, changedFiles: o.files ?? ["src/a.ts"] });
  return deliver(db, prComment({ repo: repo.fullName, number: 5, body: "@agent diagnose", login: "octocat", association: "MEMBER" }));
};

const labeled = (o: { headRef?: string; label?: string } = {}) => (repo: Repo, n: string) =>
  deliver(db, pullRequestEvent({ repo: repo.fullName, action: "labeled", number: 6, title: "t", headRef: o.headRef ?? "feature/a", headSha: sha(n), label: o.label ?? repo.dispatchLabel, sender: "octocat" }));

const cases: Case[] = [
  { kind: "failed_check", key: "all keys", rule: failedRule, run: failed() },
  { kind: "failed_check", key: "repository", rule: failedRule, elsewhere: true, run: failed(), miss: /no failed_check rules are configured/ },
  { kind: "failed_check", key: "workflow", rule: failedRule, run: failed({ workflowName: "Nightly" }), miss: /workflow: "Nightly" is not "CI"/ },
  { kind: "failed_check", key: "job", rule: failedRule, run: failed({ jobName: "lint" }), miss: /job: "lint" is not "test"/ },
  { kind: "failed_check", key: "step", rule: failedRule, run: failed({ step: "Run lint" }), miss: /step: "Run lint" is not "Run npm test"/ },
  { kind: "failed_check", key: "branch", rule: failedRule, run: failed({ headBranch: "main" }), miss: /branch: "main" does not match "feature\/\*\*"/ },
  { kind: "failed_check", key: "paths", rule: failedRule, run: failed({ files: ["docs/readme.md"] }), miss: /paths: none of 1 changed file match src\/\*\*/ },
  { kind: "failed_check", key: "failureSignature", rule: failedRule, run: failed({ log: LOGS.tscA }), miss: /failureSignature: [0-9a-f]{16} is not / },
  { kind: "pr_comment", key: "all keys", rule: { branchGlob: "feature/*", pathFilters: ["src/**"] }, run: comment() },
  { kind: "pr_comment", key: "repository", rule: {}, elsewhere: true, run: comment(), miss: /no pr_comment rules are configured/ },
  { kind: "pr_comment", key: "branch", rule: { branchGlob: "feature/*" }, run: comment({ headRef: "hotfix/a" }), miss: /branch: "hotfix\/a" does not match/ },
  { kind: "pr_comment", key: "paths", rule: { pathFilters: ["src/**"] }, run: comment({ files: ["docs/a.md"] }), miss: /paths: none of 1 changed file/ },
  { kind: "label", key: "all keys", rule: { branchGlob: "feature/*" }, run: labeled() },
  { kind: "label", key: "repository", rule: {}, elsewhere: true, run: labeled(), miss: /no label rules are configured/ },
  { kind: "label", key: "branch", rule: { branchGlob: "feature/*" }, run: labeled({ headRef: "hotfix/a" }), miss: /branch: "hotfix\/a" does not match/ },
  { kind: "label", key: "paths", rule: { pathFilters: ["src/**"] }, run: labeled(), miss: /paths: changed files are unknown/ },
  { kind: "label", key: "the dispatch label", rule: {}, run: labeled({ label: "needs-review" }), miss: /"needs-review" is not the dispatch label/ },
  { kind: "release", key: "all keys", rule: { branchGlob: "v2.*" }, run: (repo, n) => deliver(db, releasePublished({ repo: repo.fullName, tag: "v2.1.0", targetCommitish: sha(n) })) },
  { kind: "release", key: "all keys (tag push)", rule: { branchGlob: "v2.*" }, run: (repo, n) => deliver(db, tagPush({ repo: repo.fullName, tag: "v2.2.0", sha: sha(n) })) },
  { kind: "release", key: "repository", rule: {}, elsewhere: true, run: (repo, n) => deliver(db, releasePublished({ repo: repo.fullName, tag: "v2.1.0", targetCommitish: sha(n) })), miss: /no release rules/ },
  { kind: "release", key: "branch (tag)", rule: { branchGlob: "v2.*" }, run: (repo, n) => deliver(db, releasePublished({ repo: repo.fullName, tag: "v1.0.0", targetCommitish: sha(n) })), miss: /tag: "v1.0.0" does not match "v2.\*"/ },
  { kind: "release", key: "workflow", rule: { workflow: "Release" }, run: (repo, n) => deliver(db, releasePublished({ repo: repo.fullName, tag: "v2.1.0", targetCommitish: sha(n) })), miss: /workflow: the event has none, the rule wants "Release"/ },
  { kind: "check_rerun", key: "all keys", rule: { workflow: "CI", job: "test" }, run: (repo, n) => local(checkRerun({ repo: repo.fullName, headSha: sha(n), jobName: "test", originalRunId: `run-${n}` })) },
  { kind: "check_rerun", key: "job", rule: { job: "test" }, run: (repo, n) => local(checkRerun({ repo: repo.fullName, headSha: sha(n), jobName: "lint", originalRunId: `run-${n}` })), miss: /job: "lint" is not "test"/ },
  { kind: "check_rerun", key: "workflow", rule: { workflow: "Deploy" }, run: (repo, n) => local(checkRerun({ repo: repo.fullName, headSha: sha(n), jobName: "test", originalRunId: `run-${n}` })), miss: /workflow: "CI" is not "Deploy"/ },
  {
    kind: "flaky_scan",
    key: "all keys",
    rule: { failureSignature: FLAKY, branchGlob: "main", pathFilters: ["e2e/**"] },
    run: async (repo, n) => {
      // The scan's subject: the newest commit on the branch that failed this way.
      await db.pipeline.create({
        data: {
          repositoryId: repo.id, workflowName: "CI", checkName: "CI / e2e", externalId: `p-${n}`, status: "completed", conclusion: "failure", headSha: sha(n), headBranch: "main",
          jobs: { create: { externalId: `j-${n}`, name: "e2e", status: "completed", conclusion: "failure", failureSignature: FLAKY } },
        },
      });
      const result = await local(flakyScan({ repo: repo.fullName, signature: FLAKY }));
      expect((await db.agentDispatchRun.findFirstOrThrow({ where: { repositoryId: repo.id } })).headSha).toBe(sha(n));
      return result;
    },
  },
  { kind: "flaky_scan", key: "failureSignature", rule: { failureSignature: FLAKY }, run: (repo) => local(flakyScan({ repo: repo.fullName, signature: "fedcba9876543210" })), miss: /failureSignature: fedcba9876543210 is not/ },
  { kind: "flaky_scan", key: "branch", rule: { branchGlob: "release/*" }, run: (repo) => local(flakyScan({ repo: repo.fullName, signature: FLAKY })), miss: /branch: "main" does not match/ },
  { kind: "manual", key: "all keys", rule: { workflow: "CI" }, run: (repo, n) => local(manualRequest({ repo: repo.fullName, headSha: sha(n), workflowName: "CI" })) },
  { kind: "manual", key: "workflow", rule: { workflow: "CI" }, run: (repo, n) => local(manualRequest({ repo: repo.fullName, headSha: sha(n), workflowName: "Nightly" })), miss: /workflow: "Nightly" is not "CI"/ },
];

describe("stored trigger rules, end to end", () => {
  it.each(cases.map((c) => [c.kind, c.miss ? "misses on" : "matches on", c.key, c] as const))("%s %s %s", async (_k, _m, _key, c) => {
    const repo = await createRepository();
    const rule = await createRule(db, {
      kind: c.kind as never,
      stackId,
      repositoryId: c.elsewhere ? otherRepoId : repo.id,
      ...(c.rule as Record<string, never>),
    });
    const result = await c.run(repo, `${c.kind}-${c.key}-${repo.id}`);
    const runs = await db.agentDispatchRun.findMany({ where: { repositoryId: repo.id } });
    if (!c.miss) {
      expect(result.outcome, result.detail).toBe("processed");
      expect(runs).toHaveLength(1);
      expect(runs[0]).toMatchObject({ triggerRuleId: rule.id, source: c.kind === "label" ? "label" : c.kind });
      expect(result.detail).toContain(`run #${runs[0]!.number}`);
    } else {
      expect(runs).toHaveLength(0);
      expect(result.detail).toMatch(c.miss);
    }
  });
});
