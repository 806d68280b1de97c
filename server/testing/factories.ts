import { randomBytes } from "node:crypto";
import type { RepoRole, Repository, RunStatus } from "@/server/db";
import { hashPassword } from "better-auth/crypto";
import { getDb, transaction, type PrismaClient } from "@/server/db";
import { insertPasswordUser } from "@/server/domain/users/accounts";
import type { SessionUser } from "@/server/auth/roles";
import { digestOf, sha256 } from "@/server/lib/digest";
import { createTRPCContext } from "@/server/trpc/init";
import { createCaller } from "@/server/trpc/root";
import { createPullRequest, sha } from "@/server/domain/ingest/fixtures/world";
import { createExecRun, createStack, scriptedSpec } from "@/server/queue/testing/fixtures";

// Factories for integration tests: real rows through the real code paths.

const uid = () => randomBytes(5).toString("hex");
export const TEST_PASSWORD = "correct-horse-battery";

// better-auth's own scrypt hash of TEST_PASSWORD, made once per test file (sign-in checks it).
let testPasswordHash: Promise<string> | null = null;

/** A user with a password account, as an admin creates one (email sign-up is off). */
export async function createUser(opts: { email?: string; name?: string; isAdmin?: boolean } = {}): Promise<SessionUser> {
  const email = opts.email ?? `user-${uid()}@example.test`;
  testPasswordHash ??= hashPassword(TEST_PASSWORD);
  const passwordHash = await testPasswordHash;
  return transaction(getDb(), "createUser", (tx) =>
    insertPasswordUser(tx, { email: email.toLowerCase(), name: opts.name ?? "Test User", passwordHash, isAdmin: opts.isAdmin ?? false, admittedVia: "admin", now: new Date() }),
  );
}

export async function createRepository(opts: { fullName?: string; members?: [SessionUser, RepoRole][] } = {}) {
  const db = getDb();
  const fullName = opts.fullName ?? `acme/repo-${uid()}`;
  const repo = await db.repository.create({
    data: { fullName, cloneUrl: `https://example.test/${fullName}.git` },
  });
  for (const [user, role] of opts.members ?? []) {
    await db.membership.create({ data: { userId: user.id, repositoryId: repo.id, role } });
  }
  return repo;
}

/** A run with a minimal, well-formed snapshot and bundle. */
export async function createRun(opts: { repositoryId: string; status?: RunStatus; createdAt?: Date; title?: string; db?: PrismaClient }) {
  const db = opts.db ?? getDb();
  const bundle = { repository: { id: opts.repositoryId } };
  const snapshot = { name: "test-stack", version: 1 };
  const prompt = "Diagnose the failing check.";
  return db.agentDispatchRun.create({
    data: {
      title: opts.title ?? `Run ${uid()}`,
      repositoryId: opts.repositoryId,
      source: "manual",
      taskKind: "diagnose",
      actor: "tester",
      status: opts.status ?? "queued",
      headSha: sha256(uid()).slice(0, 40),
      stackSnapshot: snapshot,
      stackDigest: digestOf(snapshot),
      contextBundle: bundle,
      contextDigest: digestOf(bundle),
      prompt,
      promptHash: `sha256:${sha256(prompt)}`,
      dedupeKey: `test:${uid()}`,
      createdAt: opts.createdAt,
    },
  });
}

/** A tRPC caller as `user` (null: anonymous), through the real procedures. */
export function callerFor(user: SessionUser | null, now?: () => Date) {
  return createCaller(createTRPCContext({ user, now }));
}

/**
 * The fix-forward loop's subject: a pull request (head `headRef`, head sha `sha("pr-<number>")`)
 * whose branch an agent run of ours pushed to: the authoring run has succeeded with an executed
 * `update_pr_branch` write-back. Pass `repository` to use one already configured, `stack` to change
 * the scripted stack's spec.
 */
export async function createEngagedPullRequest(
  opts: { repository?: Repository; number?: number; headRef?: string; stack?: Parameters<typeof scriptedSpec>[0] } = {},
) {
  const db = getDb();
  const number = opts.number ?? 7;
  const headRef = opts.headRef ?? "agent/fix-sum";
  const repo = opts.repository ?? (await createRepository());
  const stack = await createStack(scriptedSpec(opts.stack));
  const pr = await createPullRequest(db, { repositoryId: repo.id, number, headSha: sha(`pr-${number}`), headRef });
  const created = await createExecRun({ repositoryId: repo.id, stack, sha: sha(`pr-${number}`) });
  const author = await db.agentDispatchRun.update({ where: { id: created.id }, data: { status: "succeeded", pullRequestId: pr.id, headBranch: headRef } });
  await db.writeBack.create({
    data: {
      runId: author.id,
      kind: "update_pr_branch",
      actor: "tester",
      stackDigest: author.stackDigest,
      contextDigest: author.contextDigest,
      promptHash: author.promptHash,
      target: { repository: repo.fullName, branch: headRef, prNumber: number },
      idempotencyKey: `wb_${author.id}`,
      outcome: "succeeded",
    },
  });
  return { repo, pr, author, stack };
}
