import type { DeliveryOutcome, Prisma, PrismaClient, TaskKind, TriggerAction, TriggerKind } from "@/server/db";
import { SIGNATURE } from "./ci";
import { SHA } from "./forge";
import { REPO, type RepoIds, type RepoName } from "./repos";
import type { StackIds, StackName } from "./stacks";
import { minutesBefore, stableUuid } from "./util";

// Trigger rules (one or more of every kind) and a few webhook deliveries,
// including the redeliveries that were dropped as duplicates.

export type RuleName =
  | "failed-check-suggest-diagnosis"
  | "payments-api-auto-repair-unit-tests"
  | "calculator-npm-test"
  | "known-flaky-settings-e2e"
  | "pr-comment-fix"
  | "label-agent-diagnose"
  | "release-readiness"
  | "nightly-flaky-scan"
  | "weekly-flaky-scan-payments"
  | "rerun-after-approved-fix"
  | "manual-dispatch"
  | "legacy-jenkins-diagnose";

type RuleSeed = {
  name: RuleName;
  kind: TriggerKind;
  repo: RepoName | null;
  workflow?: string;
  job?: string;
  step?: string;
  branchGlob?: string;
  pathFilters?: string[];
  failureSignature?: string;
  stack: StackName;
  taskKind: TaskKind;
  action: TriggerAction;
  enabled?: boolean;
};

export const triggerRules: RuleSeed[] = [
  { name: "failed-check-suggest-diagnosis", kind: "failed_check", repo: null, branchGlob: "**", stack: "claude-code-ci-diagnoser", taskKind: "diagnose", action: "suggest" },
  { name: "payments-api-auto-repair-unit-tests", kind: "failed_check", repo: REPO.payments, workflow: "CI", job: "unit-tests", step: "Run vitest", branchGlob: "**", pathFilters: ["services/api/**"], stack: "claude-code-ci-diagnoser", taskKind: "repair", action: "auto_run" },
  { name: "calculator-npm-test", kind: "failed_check", repo: REPO.calculator, workflow: "local-ci", job: "test", step: "npm test", stack: "scripted-demo-fixer", taskKind: "diagnose", action: "suggest" },
  { name: "known-flaky-settings-e2e", kind: "failed_check", repo: REPO.console, workflow: "CI", job: "e2e", failureSignature: SIGNATURE.e2e, stack: "claude-code-ci-diagnoser", taskKind: "triage", action: "suggest" },
  { name: "pr-comment-fix", kind: "pr_comment", repo: null, stack: "claude-code-ci-diagnoser", taskKind: "repair", action: "auto_run" },
  { name: "label-agent-diagnose", kind: "label", repo: REPO.console, stack: "claude-code-ci-diagnoser", taskKind: "diagnose", action: "auto_run" },
  { name: "release-readiness", kind: "release", repo: null, workflow: "Release", branchGlob: "v*", stack: "release-reviewer", taskKind: "release_review", action: "auto_run" },
  { name: "nightly-flaky-scan", kind: "flaky_scan", repo: REPO.console, branchGlob: "main", pathFilters: ["e2e/**", "src/**"], stack: "claude-code-ci-diagnoser", taskKind: "triage", action: "auto_run" },
  { name: "weekly-flaky-scan-payments", kind: "flaky_scan", repo: REPO.payments, branchGlob: "main", stack: "claude-code-ci-diagnoser", taskKind: "triage", action: "auto_run" },
  { name: "rerun-after-approved-fix", kind: "check_rerun", repo: null, stack: "scripted-demo-fixer", taskKind: "diagnose", action: "auto_run" },
  { name: "manual-dispatch", kind: "manual", repo: null, stack: "claude-code-ci-diagnoser", taskKind: "diagnose", action: "auto_run" },
  { name: "legacy-jenkins-diagnose", kind: "failed_check", repo: REPO.payments, workflow: "jenkins/legacy-build", stack: "claude-code-ci-diagnoser", taskKind: "diagnose", action: "suggest", enabled: false },
];

export type RuleRef = { id: string; seed: RuleSeed };
export type RuleIds = Record<RuleName, RuleRef>;

export async function seedTriggerRules(db: PrismaClient, now: Date, repos: RepoIds, stacks: StackIds): Promise<RuleIds> {
  const createdAt = minutesBefore(now, 11 * 24 * 60);
  const repoId = (r: RuleSeed) => (r.repo ? repos[r.repo] : null);
  // Rules have no natural unique key: (name, repository) identifies a seeded one.
  const find = () => db.triggerRule.findMany({ where: { name: { in: triggerRules.map((r) => r.name) } }, select: { id: true, name: true, repositoryId: true } });
  const existing = await find();
  const missing = triggerRules.filter((r) => !existing.some((e) => e.name === r.name && e.repositoryId === repoId(r)));
  if (missing.length > 0) {
    await db.triggerRule.createMany({
      data: missing.map((r) => ({
        name: r.name,
        kind: r.kind,
        repositoryId: repoId(r),
        workflow: r.workflow,
        job: r.job,
        step: r.step,
        branchGlob: r.branchGlob,
        pathFilters: r.pathFilters ?? [],
        failureSignature: r.failureSignature,
        stackId: stacks[r.stack].id,
        taskKind: r.taskKind,
        action: r.action,
        enabled: r.enabled ?? true,
        createdAt,
        updatedAt: createdAt,
      })),
    });
  }
  const rows = missing.length > 0 ? await find() : existing;
  const refs = triggerRules.map((r) => {
    const row = rows.find((e) => e.name === r.name && e.repositoryId === repoId(r));
    if (!row) throw new Error(`seed: trigger rule ${r.name} is missing`);
    return [r.name, { id: row.id, seed: r }] as const;
  });
  return Object.fromEntries(refs) as RuleIds;
}

// ---------------------------------------------------------------- webhook deliveries

type DeliverySeed = {
  label: string;
  event: string;
  action?: string;
  outcome: DeliveryOutcome;
  detail?: string;
  minutesAgo: number;
  payload: Prisma.InputJsonValue;
};

const workflowRun = (repo: string, id: number, sha: string, branch: string, pr: number, conclusion: string) => ({
  action: "completed",
  workflow_run: { id, name: "CI", head_sha: sha, head_branch: branch, status: "completed", conclusion, event: "pull_request", pull_requests: [{ number: pr }] },
  repository: { full_name: repo },
  sender: { login: "github-actions[bot]", type: "Bot" },
});

export const deliveries: DeliverySeed[] = [
  { label: "pay-412b", event: "workflow_run", action: "completed", outcome: "processed", detail: "1 rule matched: payments-api-auto-repair-unit-tests", minutesAgo: 44, payload: workflowRun(REPO.payments, 11874410387, SHA.pay412b, "mchen/refund-idempotency", 412, "failure") },
  { label: "pay-412b-redelivery-1", event: "workflow_run", action: "completed", outcome: "duplicate", detail: "redelivery: dedupe key already dispatched", minutesAgo: 43, payload: workflowRun(REPO.payments, 11874410387, SHA.pay412b, "mchen/refund-idempotency", 412, "failure") },
  { label: "pay-412b-redelivery-2", event: "workflow_run", action: "completed", outcome: "duplicate", detail: "redelivery: dedupe key already dispatched", minutesAgo: 38, payload: workflowRun(REPO.payments, 11874410387, SHA.pay412b, "mchen/refund-idempotency", 412, "failure") },
  { label: "pay-412b-rerequested", event: "check_suite", action: "rerequested", outcome: "duplicate", detail: "check suite re-requested on the same commit: dedupe key already dispatched", minutesAgo: 31, payload: { action: "rerequested", check_suite: { head_sha: SHA.pay412b, head_branch: "mchen/refund-idempotency" }, repository: { full_name: REPO.payments }, sender: { login: "mchen" } } },
  { label: "pay-415-comment", event: "issue_comment", action: "created", outcome: "processed", detail: "1 rule matched: pr-comment-fix (fork PR: untrusted pool)", minutesAgo: 26, payload: { action: "created", issue: { number: 415, pull_request: { url: "https://api.github.com/repos/acme/payments-api/pulls/415" } }, comment: { id: 2481736254, body: "@agent fix failing check", user: { login: "mchen" }, author_association: "MEMBER" }, repository: { full_name: REPO.payments } } },
  { label: "con-231-labeled", event: "pull_request", action: "labeled", outcome: "processed", detail: "1 rule matched: label-agent-diagnose", minutesAgo: 601, payload: { action: "labeled", number: 231, label: { name: "agent:diagnose" }, pull_request: { number: 231, head: { sha: SHA.con231a, ref: "settings-rsc" } }, repository: { full_name: REPO.console }, sender: { login: "mchen" } } },
  { label: "con-release-2140", event: "release", action: "published", outcome: "processed", detail: "1 rule matched: release-readiness", minutesAgo: 71, payload: { action: "published", release: { tag_name: "v2.14.0", target_commitish: "main", draft: false, prerelease: true }, repository: { full_name: REPO.console }, sender: { login: "arivera" } } },
  { label: "con-ping", event: "ping", outcome: "ignored", detail: "ping: webhook configured", minutesAgo: 11 * 24 * 60, payload: { zen: "Keep it logically awesome.", hook_id: 491827365, repository: { full_name: REPO.console } } },
  { label: "bad-signature", event: "workflow_run", action: "completed", outcome: "rejected", detail: "X-Hub-Signature-256 does not match the configured secret", minutesAgo: 2200, payload: { note: "payload not stored: signature verification failed" } },
  { label: "con-236-push", event: "workflow_run", action: "completed", outcome: "processed", detail: "1 rule matched: failed-check-suggest-diagnosis", minutesAgo: 1321, payload: workflowRun(REPO.console, 9920877410, SHA.con236, "renovate/node-22.x", 236, "failure") },
];

export async function seedDeliveries(db: PrismaClient, now: Date): Promise<void> {
  await db.webhookDelivery.createMany({
    data: deliveries.map((d) => {
      const receivedAt = minutesBefore(now, d.minutesAgo);
      return {
        deliveryId: stableUuid(d.label),
        source: "github" as const,
        event: d.event,
        action: d.action,
        payload: d.payload,
        outcome: d.outcome,
        detail: d.detail,
        receivedAt,
        processedAt: d.outcome === "received" ? null : new Date(receivedAt.getTime() + 180),
      };
    }),
    skipDuplicates: true,
  });
}
