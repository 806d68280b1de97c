import type { CheckConclusion, PrismaClient } from "@/server/db";
import { LOGS, type LogName } from "./logs";
import { DEMO_FLAKY_BRANCH } from "@/server/forges/local/demo";
import { SHA } from "./forge";
import { type PrIds, prKey, REPO, type RepoIds, type RepoName } from "./repos";
import { failureSignature, minutesBefore } from "./util";

// Pipelines and jobs: the CI objects runs link to. Failing jobs carry a bounded
// log excerpt, failing tests and a failure signature; the other jobs of the same
// pipeline are green, as in a real workflow run.

type JobSeed = {
  name: string;
  step: string;
  image: string;
  runnerPool: string;
  durationMs: number;
  failure?: { log: LogName; exitCode: number; tests: string[]; errorLine: string; conclusion?: CheckConclusion };
};

type PipelineSeed = {
  key: string;
  repo: RepoName;
  pr?: number;
  workflowName: string;
  externalId: string;
  headSha: string;
  headBranch: string;
  event: string;
  minutesAgo: number;
  durationMin: number;
  jobs: JobSeed[];
  /** The failing job's name; the pipeline then concludes failure. */
  failing?: string;
  /** A rerun an agent run asked for (the run's plan key): linked once the run exists. */
  triggeredBy?: string;
  /** The check's name when it is not derived from the failing job (a green local CI check). */
  checkName?: string;
};

const GH = "ubuntu-22.04-4core";
const NODE = "node:22-bookworm";

// ---------------------------------------------------------------- failures

const sumFailure = {
  log: "calculatorSum",
  exitCode: 1,
  tests: ["sum > adds every number in the list", "sum > returns the only element of a one-element list"],
  errorLine: "AssertionError: expected 5 to be 6 // Object.is equality",
} as const satisfies JobSeed["failure"];

const refundFailure = {
  log: "paymentsRefund",
  exitCode: 1,
  tests: ["RefundService > returns the original refund when an idempotency key is replayed"],
  errorLine: "AssertionError: expected { id: 're_…', …(4) } to deeply equal { id: 're_…', …(4) }",
} as const satisfies JobSeed["failure"];

const tscFailure = {
  log: "paymentsTsc",
  exitCode: 2,
  tests: [],
  errorLine: "services/api/src/money/round.ts: error TS2322: Type 'number | undefined' is not assignable to type 'number'.",
} as const satisfies JobSeed["failure"];

const pytestFailure = {
  log: "reconcilerPytest",
  exitCode: 1,
  tests: ["tests/test_settlement.py::test_partial_settlement_keeps_remaining_balance"],
  errorLine: "AssertionError: assert Decimal('0.00') == Decimal('37.50')",
} as const satisfies JobSeed["failure"];

const goFailure = {
  log: "relayGoTest",
  exitCode: 1,
  tests: ["TestBackoffWithJitter/caps_at_max_delay"],
  errorLine: "backoff_test.go:42: delay exceeds MaxDelay",
} as const satisfies JobSeed["failure"];

const eslintFailure = {
  log: "consoleEslint",
  exitCode: 1,
  tests: [],
  errorLine: "@typescript-eslint/no-floating-promises src/app/settings/notifications/page.tsx; @typescript-eslint/no-unused-vars src/app/settings/profile/actions.ts",
} as const satisfies JobSeed["failure"];

const dockerFailure = {
  log: "consoleDocker",
  exitCode: 1,
  tests: [],
  errorLine: "gyp ERR! stack Error: Could not find any Python installation to use",
} as const satisfies JobSeed["failure"];

const e2eFailure = {
  log: "consoleE2eTimeout",
  exitCode: 1,
  tests: ["settings › saves notification preferences"],
  errorLine: "Test timeout of 30000ms exceeded.",
  conclusion: "failure",
} as const satisfies JobSeed["failure"];

export const SIGNATURE = {
  sum: failureSignature(sumFailure),
  refund: failureSignature(refundFailure),
  tsc: failureSignature(tscFailure),
  pytest: failureSignature(pytestFailure),
  go: failureSignature(goFailure),
  eslint: failureSignature(eslintFailure),
  docker: failureSignature(dockerFailure),
  e2e: failureSignature(e2eFailure),
} as const;

// ---------------------------------------------------------------- workflows

const calculatorJobs = (failing: boolean): JobSeed[] => [
  { name: "test", step: "npm test", image: "node:22", runnerPool: "local-ci", durationMs: 2_840, failure: failing ? sumFailure : undefined },
];

const paymentsCi = (failure?: { job: string; f: NonNullable<JobSeed["failure"]> }): JobSeed[] =>
  [
    { name: "lint", step: "Run eslint", image: NODE, runnerPool: GH, durationMs: 41_200 },
    { name: "typecheck", step: "Run tsc", image: NODE, runnerPool: GH, durationMs: 58_900 },
    { name: "unit-tests", step: "Run vitest", image: NODE, runnerPool: GH, durationMs: 96_400 },
    { name: "reconciler-tests", step: "Run pytest", image: "python:3.12-slim", runnerPool: GH, durationMs: 71_300 },
    { name: "relay-tests", step: "go test", image: "golang:1.23", runnerPool: GH, durationMs: 64_800 },
  ].map((j) => (failure && j.name === failure.job ? { ...j, failure: failure.f } : j));

const consoleCi = (failure?: { job: string; f: NonNullable<JobSeed["failure"]> }): JobSeed[] =>
  [
    { name: "lint", step: "Run eslint", image: NODE, runnerPool: GH, durationMs: 52_700 },
    { name: "unit", step: "Run vitest", image: NODE, runnerPool: GH, durationMs: 88_100 },
    { name: "e2e", step: "Run Playwright", image: "mcr.microsoft.com/playwright:v1.49.0-noble", runnerPool: GH, durationMs: 214_000 },
    { name: "build-image", step: "Build and push image", image: "docker:27-dind", runnerPool: "ubuntu-22.04-8core", durationMs: 143_500 },
  ].map((j) => (failure && j.name === failure.job ? { ...j, failure: failure.f } : j));

const releaseJobs: JobSeed[] = [
  { name: "build-image", step: "Build and push image", image: "docker:27-dind", runnerPool: "ubuntu-22.04-8core", durationMs: 188_000 },
  { name: "package-chart", step: "helm package", image: "alpine/helm:3.16.2", runnerPool: GH, durationMs: 21_400 },
  { name: "publish-npm", step: "npm publish --dry-run", image: NODE, runnerPool: GH, durationMs: 38_600 },
  { name: "checksums", step: "sha256sum dist/*", image: "alpine:3.20", runnerPool: GH, durationMs: 6_200 },
];

export const pipelines: PipelineSeed[] = [
  // demo/calculator (local forge, local CI runs `npm test`)
  { key: "calc-red", repo: REPO.calculator, workflowName: "local-ci", externalId: "local-ci-41", headSha: SHA.calcRed, headBranch: "main", event: "push", minutesAgo: 200, durationMin: 1, jobs: calculatorJobs(true), failing: "test" },
  { key: "calc-fixed", repo: REPO.calculator, workflowName: "local-ci", externalId: "local-ci-42", headSha: SHA.calcFixed, headBranch: "main", event: "rerun", minutesAgo: 179, durationMin: 1, jobs: calculatorJobs(false), triggeredBy: "calc-sum-repair" },
  // The flaky-test scene's history: the due-date test passed here on the old runners (which set
  // TZ), under the local CI's own check name, so a failure of it here reads as flaky.
  { key: "calc-flaky-pass", repo: REPO.calculator, workflowName: "local-ci", checkName: "local-ci / test", externalId: "local-ci-44", headSha: SHA.calcFlaky, headBranch: DEMO_FLAKY_BRANCH, event: "push", minutesAgo: 9, durationMin: 1, jobs: calculatorJobs(false) },
  { key: "calc-feature", repo: REPO.calculator, workflowName: "local-ci", externalId: "local-ci-43", headSha: SHA.calcInvoice, headBranch: "invoice-totals", event: "push", minutesAgo: 14, durationMin: 1, jobs: calculatorJobs(true), failing: "test" },
  // acme/payments-api
  { key: "pay-412a", repo: REPO.payments, pr: 412, workflowName: "CI", externalId: "11873649021", headSha: SHA.pay412a, headBranch: "mchen/refund-idempotency", event: "pull_request", minutesAgo: 1560, durationMin: 4, jobs: paymentsCi({ job: "unit-tests", f: refundFailure }), failing: "unit-tests" },
  { key: "pay-412b", repo: REPO.payments, pr: 412, workflowName: "CI", externalId: "11874410387", headSha: SHA.pay412b, headBranch: "mchen/refund-idempotency", event: "pull_request", minutesAgo: 48, durationMin: 4, jobs: paymentsCi({ job: "unit-tests", f: refundFailure }), failing: "unit-tests" },
  { key: "pay-415", repo: REPO.payments, pr: 415, workflowName: "CI", externalId: "11874021556", headSha: SHA.pay415, headBranch: "fix/zero-decimal-rounding", event: "pull_request", minutesAgo: 400, durationMin: 3, jobs: paymentsCi({ job: "typecheck", f: tscFailure }), failing: "typecheck" },
  { key: "pay-409a", repo: REPO.payments, pr: 409, workflowName: "CI", externalId: "11861130942", headSha: SHA.pay409a, headBranch: "priya/partial-settlement", event: "pull_request", minutesAgo: 3000, durationMin: 4, jobs: paymentsCi({ job: "reconciler-tests", f: pytestFailure }), failing: "reconciler-tests" },
  { key: "pay-409b", repo: REPO.payments, pr: 409, workflowName: "CI", externalId: "11873900114", headSha: SHA.pay409b, headBranch: "priya/partial-settlement", event: "pull_request", minutesAgo: 100, durationMin: 4, jobs: paymentsCi({ job: "reconciler-tests", f: pytestFailure }), failing: "reconciler-tests" },
  { key: "pay-418", repo: REPO.payments, pr: 418, workflowName: "CI", externalId: "11873987760", headSha: SHA.pay418, headBranch: "tk/backoff-jitter", event: "pull_request", minutesAgo: 345, durationMin: 4, jobs: paymentsCi({ job: "relay-tests", f: goFailure }), failing: "relay-tests" },
  { key: "pay-main", repo: REPO.payments, workflowName: "CI", externalId: "11874102233", headSha: SHA.payMain, headBranch: "main", event: "push", minutesAgo: 200, durationMin: 4, jobs: paymentsCi() },
  { key: "pay-release", repo: REPO.payments, workflowName: "Release", externalId: "11840021987", headSha: SHA.payRelease, headBranch: "v3.8.0", event: "push", minutesAgo: 3040, durationMin: 6, jobs: releaseJobs },
  // acme/web-console
  { key: "con-231a", repo: REPO.console, pr: 231, workflowName: "CI", externalId: "9921044721", headSha: SHA.con231a, headBranch: "settings-rsc", event: "pull_request", minutesAgo: 640, durationMin: 5, jobs: consoleCi({ job: "lint", f: eslintFailure }), failing: "lint" },
  { key: "con-231b", repo: REPO.console, pr: 231, workflowName: "CI", externalId: "9921339025", headSha: SHA.con231b, headBranch: "settings-rsc", event: "pull_request", minutesAgo: 36, durationMin: 5,
    // The rebased head also breaks the settings e2e (green at the first head): attributed to us in prisma/seed/story.ts.
    jobs: consoleCi({ job: "lint", f: eslintFailure }).map((j) => (j.name === "e2e" ? { ...j, failure: e2eFailure } : j)), failing: "lint" },
  { key: "con-236", repo: REPO.console, pr: 236, workflowName: "CI", externalId: "9920877410", headSha: SHA.con236, headBranch: "renovate/node-22.x", event: "pull_request", minutesAgo: 1330, durationMin: 6, jobs: consoleCi({ job: "build-image", f: dockerFailure }), failing: "build-image" },
  { key: "con-229", repo: REPO.console, pr: 229, workflowName: "CI", externalId: "9921101876", headSha: SHA.con229, headBranch: "notify-approvals", event: "pull_request", minutesAgo: 745, durationMin: 7, jobs: consoleCi({ job: "e2e", f: e2eFailure }), failing: "e2e" },
  { key: "con-main-red", repo: REPO.console, workflowName: "CI", externalId: "9919802211", headSha: SHA.conMainRed, headBranch: "main", event: "push", minutesAgo: 2030, durationMin: 7, jobs: consoleCi({ job: "e2e", f: e2eFailure }), failing: "e2e" },
  { key: "con-main", repo: REPO.console, workflowName: "CI", externalId: "9921402210", headSha: SHA.conMain, headBranch: "main", event: "push", minutesAgo: 150, durationMin: 7, jobs: consoleCi() },
  { key: "con-release-2140", repo: REPO.console, workflowName: "Release", externalId: "9921350091", headSha: SHA.conRelease2140, headBranch: "v2.14.0", event: "push", minutesAgo: 85, durationMin: 6, jobs: releaseJobs },
  { key: "con-release-2132", repo: REPO.console, workflowName: "Release", externalId: "9917730045", headSha: SHA.conRelease2132, headBranch: "v2.13.2", event: "push", minutesAgo: 4330, durationMin: 6, jobs: releaseJobs },
];

export type PipelineRef = {
  id: string;
  seed: PipelineSeed;
  url: string | null;
  checkName: string;
  failingJob?: { id: string; externalId: string; seed: JobSeed; signature: string };
};
export type PipelineRefs = Map<string, PipelineRef>;

const jobExternalId = (p: PipelineSeed, i: number) =>
  /^\d+$/.test(p.externalId) ? String(BigInt(p.externalId) * 3n + BigInt(i)) : `${p.externalId}-${i + 1}`;

export const pipelineCheckName = (p: PipelineSeed) => p.checkName ?? (p.failing ? `${p.workflowName} / ${p.failing}` : p.workflowName);

export async function seedPipelines(db: PrismaClient, now: Date, repos: RepoIds, prs: PrIds): Promise<PipelineRefs> {
  // Every seeded repository is on the local forge: its pipelines have no page elsewhere.
  const urlOf = (_p: PipelineSeed): string | null => null;
  await db.pipeline.createMany({
    data: pipelines.map((p) => {
      const startedAt = minutesBefore(now, p.minutesAgo);
      return {
        repositoryId: repos[p.repo],
        pullRequestId: p.pr ? prs.get(prKey(p.repo, p.pr)) : undefined,
        workflowName: p.workflowName,
        checkName: pipelineCheckName(p),
        externalId: p.externalId,
        status: "completed" as const,
        conclusion: p.failing ? ("failure" as const) : ("success" as const),
        headSha: p.headSha,
        headBranch: p.headBranch,
        event: p.event,
        url: urlOf(p),
        startedAt,
        completedAt: minutesBefore(now, p.minutesAgo - p.durationMin),
        createdAt: startedAt,
      };
    }),
    skipDuplicates: true,
  });
  const rows = await db.pipeline.findMany({
    where: { repositoryId: { in: Object.values(repos) }, externalId: { in: pipelines.map((p) => p.externalId) } },
    select: { id: true, repositoryId: true, externalId: true },
  });
  const refs: PipelineRefs = new Map();
  for (const p of pipelines) {
    const row = rows.find((r) => r.repositoryId === repos[p.repo] && r.externalId === p.externalId);
    if (!row) throw new Error(`seed: pipeline ${p.key} is missing`);
    refs.set(p.key, { id: row.id, seed: p, url: urlOf(p), checkName: pipelineCheckName(p) });
  }

  await db.job.createMany({
    data: pipelines.flatMap((p) =>
      p.jobs.map((j, i) => {
        const f = j.failure;
        const log = f ? LOGS[f.log] : undefined;
        return {
          pipelineId: refs.get(p.key)!.id,
          externalId: jobExternalId(p, i),
          name: j.name,
          step: j.step,
          status: "completed" as const,
          conclusion: f ? (f.conclusion ?? ("failure" as const)) : ("success" as const),
          exitCode: f ? f.exitCode : 0,
          runnerPool: j.runnerPool,
          image: j.image,
          durationMs: j.durationMs,
          logExcerpt: log?.text ?? "",
          logExcerptStartLine: log?.startLine ?? 1,
          failureSignature: f ? failureSignature(f) : undefined,
          failingTests: f ? [...f.tests] : [],
          createdAt: minutesBefore(now, p.minutesAgo),
        };
      }),
    ),
    skipDuplicates: true,
  });
  const failing = await db.job.findMany({
    where: { pipelineId: { in: rows.map((r) => r.id) }, failureSignature: { not: null } },
    select: { id: true, pipelineId: true, externalId: true },
  });
  for (const ref of refs.values()) {
    ref.seed.jobs.forEach((j, i) => {
      if (!j.failure) return;
      const externalId = jobExternalId(ref.seed, i);
      const job = failing.find((f) => f.pipelineId === ref.id && f.externalId === externalId);
      if (job) ref.failingJob = { id: job.id, externalId, seed: j, signature: failureSignature(j.failure) };
    });
  }
  return refs;
}
