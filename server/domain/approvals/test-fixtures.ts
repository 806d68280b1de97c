import type { SessionUser } from "@/server/auth/roles";
import { getDb } from "@/server/db";
import { createLocalForge } from "@/server/forges/local/write-back";
import { contentDigest } from "@/server/lib/digest";
import { createExecRun, createLocalRepository, createStack, scriptedSpec } from "@/server/queue/testing/fixtures";
import { requestWriteBack } from "./request-write-back";

// A run on the local forge awaiting approval of a real patch (tests and the bench).

export const calcBefore = "export function sum(a, b) {\n  return a + b + 1;\n}\n";
export const calcPatch = [
  "diff --git a/calc.js b/calc.js",
  "--- a/calc.js",
  "+++ b/calc.js",
  "@@ -1,3 +1,3 @@",
  " export function sum(a, b) {",
  "-  return a + b + 1;",
  "+  return a + b;",
  " }",
  "",
].join("\n");

export async function createPatchRepository(members: [SessionUser, "viewer" | "maintainer" | "admin"][]) {
  const local = await createLocalRepository({ files: { "calc.js": calcBefore }, members });
  const stack = await createStack(scriptedSpec());
  return { ...local, stack };
}

export async function createPatchApproval(opts: {
  repo: Awaited<ReturnType<typeof createPatchRepository>>;
  actorUserId?: string | null;
  ttlMs?: number;
  now?: Date;
}) {
  const { repo } = opts;
  const run = await createExecRun({ repositoryId: repo.repository.id, stack: repo.stack, sha: repo.sha, actorUserId: opts.actorUserId ?? null });
  return { run, ...(await requestPatchApproval({ repo, runId: run.id, ttlMs: opts.ttlMs, now: opts.now })) };
}

/** What a worker does when an attempt of `runId` produced the patch: it awaits approval of its push. */
export async function requestPatchApproval(opts: { repo: Awaited<ReturnType<typeof createPatchRepository>>; runId: string; ttlMs?: number; now?: Date }) {
  const db = getDb();
  await db.agentDispatchRun.update({ where: { id: opts.runId }, data: { status: "awaiting_approval" } });
  const artifact = await db.artifact.create({
    data: { runId: opts.runId, kind: "patch", name: "fix.patch", content: calcPatch, mediaType: "text/x-diff", digest: contentDigest(calcPatch), sizeBytes: Buffer.byteLength(calcPatch) },
  });
  const requested = await requestWriteBack({
    db,
    runId: opts.runId,
    action: "push_commits",
    target: { branch: "main", headSha: opts.repo.sha },
    artifactId: artifact.id,
    message: "Fix sum(): drop the off-by-one",
    ttlMs: opts.ttlMs,
    now: opts.now,
  });
  if (requested.kind !== "approval") throw new Error("expected an approval request");
  return { artifact, approvalId: requested.approvalId };
}

export function localForgeFor(dataDir: string) {
  const forge = createLocalForge({ db: getDb(), dataDir, ciTimeoutMs: 60_000 });
  return () => forge;
}
