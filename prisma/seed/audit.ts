import type { Prisma, PrismaClient } from "@/server/db";
import type { PoolIds } from "./pools";
import { REPO, type RepoIds } from "./repos";
import type { StackIds } from "./stacks";
import type { RuleIds } from "./triggers";
import { demoUsers, type DemoUserKey } from "./users";
import { minutesBefore } from "./util";

// Audit entries for the configuration changes people made before the seeded
// runs (run-level entries are written with each run). Their ids are fixed, so a
// re-seed skips them.

type Entry = { id: string; by: DemoUserKey; minutesAgo: number; action: string; objectType: string; objectId: string; repositoryId?: string; detail: Prisma.InputJsonObject };

export async function seedAudit(db: PrismaClient, now: Date, refs: { users: Record<DemoUserKey, string>; repos: RepoIds; stacks: StackIds; pools: PoolIds; rules: RuleIds }) {
  const entries: Entry[] = [
    { id: "audit_seed_pool_trusted", by: "admin", minutesAgo: 13 * 1440, action: "runner_pool.create", objectType: "RunnerPool", objectId: refs.pools["trusted-local"], detail: { name: "trusted-local", trustTier: "trusted", concurrency: 4 } },
    { id: "audit_seed_pool_sandbox", by: "admin", minutesAgo: 13 * 1440 - 5, action: "runner_pool.create", objectType: "RunnerPool", objectId: refs.pools["untrusted-sandbox"], detail: { name: "untrusted-sandbox", trustTier: "untrusted", concurrency: 2 } },
    { id: "audit_seed_pool_k8s", by: "admin", minutesAgo: 9 * 1440, action: "runner_pool.create", objectType: "RunnerPool", objectId: refs.pools["k8s-batch"], detail: { name: "k8s-batch", kind: "kubernetes", concurrency: 8 } },
    { id: "audit_seed_grant_github", by: "admin", minutesAgo: 12 * 1440, action: "secret_grant.create", objectType: "SecretGrant", objectId: "GITHUB_TOKEN", detail: { secretName: "GITHUB_TOKEN", stack: "claude-code-ci-diagnoser", privileged: true, trustedPoolsOnly: true, taskKinds: ["repair"] } },
    { id: "audit_seed_grant_npm", by: "admin", minutesAgo: 10 * 1440, action: "secret_grant.create", objectType: "SecretGrant", objectId: "NPM_TOKEN", detail: { secretName: "NPM_TOKEN", stack: "release-reviewer", privileged: true, trustedPoolsOnly: true, taskKinds: ["release_review"] } },
    { id: "audit_seed_stack_v1", by: "admin", minutesAgo: 12 * 1440, action: "stack.create", objectType: "AgentStack", objectId: refs.stacks["claude-code-ci-diagnoser"].id, detail: { name: "claude-code-ci-diagnoser", version: 1 } },
    { id: "audit_seed_stack_v2", by: "admin", minutesAgo: 2 * 1440, action: "stack.save_version", objectType: "AgentStack", objectId: refs.stacks["claude-code-ci-diagnoser"].id, detail: { name: "claude-code-ci-diagnoser", version: 2, changes: ["model claude-sonnet-4-20250514 -> claude-sonnet-4-5", "added reviewer subagent", "added sentry MCP server", "prompt: reproduce first, never weaken tests"] } },
    { id: "audit_seed_console_policy", by: "admin", minutesAgo: 8 * 1440, action: "repository.update_policy", objectType: "Repository", objectId: refs.repos[REPO.console], repositoryId: refs.repos[REPO.console], detail: { botCommentsAllowed: { from: false, to: true }, writeBackExceptions: { from: [], to: ["comment"] } } },
    { id: "audit_seed_payments_policy", by: "admin", minutesAgo: 7 * 1440, action: "repository.update_policy", objectType: "Repository", objectId: refs.repos[REPO.payments], repositoryId: refs.repos[REPO.payments], detail: { autoRunOnFailedCheck: { from: false, to: true } } },
    { id: "audit_seed_rule_disable", by: "maintainer", minutesAgo: 6 * 1440, action: "trigger_rule.disable", objectType: "TriggerRule", objectId: refs.rules["legacy-jenkins-diagnose"].id, repositoryId: refs.repos[REPO.payments], detail: { name: "legacy-jenkins-diagnose", reason: "Jenkins build retired; GitHub Actions CI replaces it" } },
    { id: "audit_seed_viewer_added", by: "admin", minutesAgo: 5 * 1440, action: "membership.create", objectType: "Membership", objectId: `${refs.users.viewer}:${REPO.payments}`, repositoryId: refs.repos[REPO.payments], detail: { user: demoUsers.viewer.email, role: "viewer" } },
  ];
  await db.auditEntry.createMany({
    data: entries.map((e) => ({
      id: e.id,
      actorUserId: refs.users[e.by],
      actor: demoUsers[e.by].email,
      action: e.action,
      objectType: e.objectType,
      objectId: e.objectId,
      repositoryId: e.repositoryId ?? null,
      detail: e.detail,
      createdAt: minutesBefore(now, e.minutesAgo),
    })),
    skipDuplicates: true,
  });
}
