import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import type { Prisma, PrismaClient, RepoRole, WriteBackKind } from "@/server/db";
import { bareRepoPath } from "@/server/forges/local/repositories";
import type { DemoUserKey } from "./users";
import { SHA } from "./forge";
import { minutesBefore } from "./util";

// Repositories, memberships and pull requests. Rows are created when missing and
// never overwritten: an admin may have changed a repository's policy since.

export const REPO = {
  payments: "acme/payments-api",
  console: "acme/web-console",
  calculator: "demo/calculator",
} as const;
export type RepoName = (typeof REPO)[keyof typeof REPO];


/** The repository's bare repository in the local forge, as a clone URL. */
export const localCloneUrl = (dataDir: string, fullName: string) => pathToFileURL(bareRepoPath(resolve(dataDir), fullName)).href;

type RepoSeed = Omit<Prisma.RepositoryCreateManyInput, "writeBackExceptions" | "cloneUrl"> & { fullName: RepoName; writeBackExceptions: WriteBackKind[] };

export const repositories: RepoSeed[] = [
  {
    fullName: REPO.payments,
    forge: "local",
    defaultBranch: "main",
    visibility: "private",
    trustTier: "trusted",
    autoRunOnFailedCheck: true,
    botCommentsAllowed: false,
    twoPersonRule: true,
    writeBackExceptions: [],
    maxFixAttempts: 3,
  },
  {
    fullName: REPO.console,
    forge: "local",
    defaultBranch: "main",
    visibility: "public",
    trustTier: "trusted",
    autoRunOnFailedCheck: false,
    botCommentsAllowed: true,
    twoPersonRule: false,
    writeBackExceptions: ["comment"],
    dispatchLabel: "agent:diagnose",
    maxFixAttempts: 2,
  },
  {
    fullName: REPO.calculator,
    forge: "local",
    defaultBranch: "main",
    visibility: "internal",
    trustTier: "trusted",
    checkCommand: "npm test",
    autoRunOnFailedCheck: false,
    botCommentsAllowed: true,
    twoPersonRule: false,
    writeBackExceptions: [],
    maxFixAttempts: 3,
  },
];

const memberships: { user: DemoUserKey; repo: RepoName; role: RepoRole }[] = [
  ...Object.values(REPO).flatMap((repo) => [
    { user: "admin" as const, repo, role: "admin" as const },
    { user: "maintainer" as const, repo, role: "maintainer" as const },
    { user: "viewer" as const, repo, role: "viewer" as const },
  ]),
];

type PrSeed = Omit<Prisma.PullRequestCreateManyInput, "repositoryId" | "createdAt" | "updatedAt" | "labels" | "changedFiles"> & {
  repo: RepoName;
  labels: string[];
  changedFiles: string[];
  openedMinutesAgo: number;
};

export const pullRequests: PrSeed[] = [
  {
    repo: REPO.payments,
    number: 412,
    title: "Return the original refund when an idempotency key is replayed",
    body: "Refund requests retried by the mobile app were creating a second refund. This stores the first response under the idempotency key and returns it on replay.\n\nCloses #398.",
    author: "mchen",
    headRef: "mchen/refund-idempotency",
    headSha: SHA.pay412b,
    baseRef: "main",
    baseSha: SHA.payMain,
    labels: ["payments", "bug", "needs-review"],
    changedFiles: [
      "services/api/src/refunds/refund-service.ts",
      "services/api/src/refunds/idempotency-store.ts",
      "services/api/src/refunds/refund-service.test.ts",
    ],
    reviewState: "review_required",
    mergeable: true,
    url: null,
    openedMinutesAgo: 1640,
  },
  {
    repo: REPO.payments,
    number: 415,
    title: "Handle zero-decimal currencies in roundMinor()",
    body: "JPY and KRW have no minor unit, so `roundMinor(1050, \"JPY\")` should not divide by 100. Adds the ISO 4217 exponent table.",
    author: "jdoe-contrib",
    headRef: "fix/zero-decimal-rounding",
    headSha: SHA.pay415,
    baseRef: "main",
    baseSha: SHA.payMain,
    isFork: true,
    headRepoFullName: "jdoe-contrib/payments-api",
    labels: ["external-contribution", "money"],
    changedFiles: ["services/api/src/money/round.ts", "services/api/src/money/round.test.ts", "services/api/src/money/currencies.ts"],
    reviewState: "commented",
    mergeable: true,
    url: null,
    openedMinutesAgo: 420,
  },
  {
    repo: REPO.payments,
    number: 409,
    title: "Reconciler: keep the remaining balance on partial settlements",
    body: "A payout settled in two bank transfers was marked settled after the first one. Track `remaining` and only settle at zero.",
    author: "priya-s",
    headRef: "priya/partial-settlement",
    headSha: SHA.pay409b,
    baseRef: "main",
    baseSha: SHA.payMain,
    labels: ["reconciler", "bug"],
    changedFiles: ["services/reconciler/reconciler/settlement.py", "services/reconciler/tests/test_settlement.py"],
    reviewState: "changes_requested",
    mergeable: true,
    url: null,
    openedMinutesAgo: 3100,
  },
  {
    repo: REPO.payments,
    number: 418,
    title: "webhook-relay: full jitter on retry backoff",
    body: "Merchants behind the same load balancer were retried in lock-step. Switch to full jitter as in the AWS architecture blog post.",
    author: "tomasz-k",
    headRef: "tk/backoff-jitter",
    headSha: SHA.pay418,
    baseRef: "main",
    baseSha: SHA.payMain,
    labels: ["webhook-relay", "reliability"],
    changedFiles: ["services/webhook-relay/internal/retry/backoff.go", "services/webhook-relay/internal/retry/backoff_test.go"],
    reviewState: "review_required",
    mergeable: true,
    url: null,
    openedMinutesAgo: 360,
  },
  {
    repo: REPO.console,
    number: 231,
    title: "Move the settings pages to server components",
    body: "Settings no longer need client-side data fetching. Profile and notification forms stay client components; the pages prefetch on the server.",
    author: "priya-s",
    headRef: "settings-rsc",
    headSha: SHA.con231b,
    baseRef: "main",
    baseSha: SHA.conMain,
    labels: ["frontend", "agent:diagnose"],
    changedFiles: [
      "src/app/settings/notifications/page.tsx",
      "src/app/settings/profile/page.tsx",
      "src/app/settings/profile/actions.ts",
      "src/app/settings/layout.tsx",
    ],
    reviewState: "approved",
    mergeable: true,
    url: null,
    openedMinutesAgo: 900,
  },
  {
    repo: REPO.console,
    number: 236,
    title: "Bump the Node base image to 22-alpine",
    body: "Node 20 leaves active LTS. Moves the runtime and build stages to `node:22-alpine`.",
    author: "renovate[bot]",
    headRef: "renovate/node-22.x",
    headSha: SHA.con236,
    baseRef: "main",
    baseSha: SHA.conMain,
    labels: ["dependencies", "docker"],
    changedFiles: ["Dockerfile", ".nvmrc", "package.json"],
    reviewState: "review_required",
    mergeable: true,
    url: null,
    openedMinutesAgo: 1400,
  },
  {
    repo: REPO.console,
    number: 229,
    title: "Notification preferences: email on approval requests",
    body: "Adds an \"Email me when a run needs approval\" toggle to Settings → Notifications.",
    author: "sam-w",
    headRef: "notify-approvals",
    headSha: SHA.con229,
    baseRef: "main",
    baseSha: SHA.conMain,
    labels: ["frontend", "settings"],
    changedFiles: ["src/app/settings/notifications/preferences-form.tsx", "e2e/settings.spec.ts", "src/server/notifications/email.ts"],
    reviewState: "review_required",
    mergeable: false,
    url: null,
    openedMinutesAgo: 800,
  },
];

export type RepoIds = Record<RepoName, string>;
export type PrIds = Map<string, string>; // "owner/name#number" -> id
export const prKey = (repo: RepoName, number: number) => `${repo}#${number}`;

export async function seedRepositories(
  db: PrismaClient,
  opts: { now: Date; dataDir: string },
  users: Record<DemoUserKey, string>,
): Promise<{ repos: RepoIds; prs: PrIds }> {
  const { now } = opts;
  const createdAt = minutesBefore(now, 14 * 24 * 60);
  await db.repository.createMany({
    data: repositories.map((r) => ({ ...r, cloneUrl: localCloneUrl(opts.dataDir, r.fullName), createdAt, updatedAt: createdAt })),
    skipDuplicates: true,
  });
  const rows = await db.repository.findMany({ where: { fullName: { in: Object.values(REPO) } }, select: { id: true, fullName: true } });
  const repos = Object.fromEntries(rows.map((r) => [r.fullName, r.id])) as RepoIds;

  await db.membership.createMany({
    data: memberships.map((m) => ({ userId: users[m.user], repositoryId: repos[m.repo], role: m.role, createdAt })),
    skipDuplicates: true,
  });
  await db.pullRequest.createMany({
    data: pullRequests.map(({ repo, openedMinutesAgo, ...pr }) => {
      const opened = minutesBefore(now, openedMinutesAgo);
      return { ...pr, repositoryId: repos[repo], createdAt: opened, updatedAt: opened };
    }),
    skipDuplicates: true,
  });
  const prRows = await db.pullRequest.findMany({ where: { repositoryId: { in: Object.values(repos) } }, select: { id: true, repositoryId: true, number: true } });
  const nameById = new Map(rows.map((r) => [r.id, r.fullName as RepoName]));
  const prs: PrIds = new Map(prRows.map((p) => [prKey(nameById.get(p.repositoryId)!, p.number), p.id]));
  return { repos, prs };
}
