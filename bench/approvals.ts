// Approvals benchmark: `npm run bench -- approvals`.
// Time from approve (the approveWriteBack transaction: row lock, WriteBack row, job) to the
// write-back recorded on the local forge by an in-process worker (job pickup, temp clone,
// git apply, commit, push with lease, record), p50/p99 over 50 sequential approvals on one
// repository (the patch and its reverse alternate, so each applies to the new head).
// Starts its own throwaway PostgreSQL through scripts/with-db.mjs.
import { spawnSync } from "node:child_process";
import { randomUUID } from "node:crypto";

const SAMPLES = 50;
const TARGET_P50_MS = 1000;

if (!process.env.DATABASE_URL) {
  const r = spawnSync(process.execPath, ["scripts/with-db.mjs", "--", process.execPath, "--import", "tsx", "bench/approvals.ts"], {
    stdio: "inherit",
    env: { ...process.env, BETTER_AUTH_SECRET: process.env.BETTER_AUTH_SECRET ?? "bench-secret-not-for-production-000" },
  });
  process.exit(r.status ?? 1);
}

const pct = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;

async function main() {
  const { getDb } = await import("@/server/db");
  const fixtures = await import("@/server/queue/testing/fixtures");
  const { calcBefore, calcPatch } = await import("@/server/domain/approvals/test-fixtures");
  const { requestWriteBack } = await import("@/server/domain/approvals/request-write-back");
  const { approveWriteBack } = await import("@/server/domain/run-engine/decide-approval");
  const { resolveRevision } = await import("@/server/forges/local/repositories");
  const { contentDigest } = await import("@/server/lib/digest");
  const { startWorker } = await import("@/server/queue/worker");
  const db = getDb();

  const user = await db.user.create({ data: { id: randomUUID(), email: "bench-approver@airlock.local", name: "Bench" } });
  const local = await fixtures.createLocalRepository({ files: { "calc.js": calcBefore } });
  await db.membership.create({ data: { userId: user.id, repositoryId: local.repository.id, role: "maintainer" } });
  const stack = await fixtures.createStack(fixtures.scriptedSpec());
  const reverse = calcPatch.replace("-  return a + b + 1;\n+  return a + b;", "-  return a + b;\n+  return a + b + 1;");
  const worker = await startWorker({ settings: { dataDir: local.dataDir, keepFailedWorkspaceMs: 0 }, demo: false });

  const samples: number[] = [];
  try {
    for (let i = 0; i < SAMPLES + 3; i++) {
      const head = (await resolveRevision(local.repoPath, "main"))!;
      const patch = i % 2 === 0 ? calcPatch : reverse;
      const run = await fixtures.createExecRun({ repositoryId: local.repository.id, stack, sha: head });
      await db.agentDispatchRun.update({ where: { id: run.id }, data: { status: "awaiting_approval" } });
      const artifact = await db.artifact.create({ data: { runId: run.id, kind: "patch", name: "fix.patch", content: patch, digest: contentDigest(patch), sizeBytes: patch.length } });
      const req = await requestWriteBack({ db, runId: run.id, action: "push_commits", target: { branch: "main", headSha: head }, artifactId: artifact.id });
      if (req.kind !== "approval") throw new Error("expected an approval");
      const t0 = performance.now();
      await approveWriteBack({ db, actor: { id: user.id, email: user.email, isAdmin: false }, approvalId: req.approvalId, artifactDigest: artifact.digest, headSha: head });
      let wb = null;
      for (;;) {
        wb = await db.writeBack.findUnique({ where: { approvalId: req.approvalId }, select: { outcome: true, error: true } });
        if (wb && wb.outcome !== "pending") break;
        await new Promise((r) => setTimeout(r, 5));
      }
      if (wb.outcome !== "succeeded") throw new Error(`write-back failed: ${wb.error}`);
      if (i >= 3) samples.push(performance.now() - t0);
    }
  } finally {
    await worker.stop();
  }
  const commits = await db.writeBack.count({ where: { outcome: "succeeded" } });
  samples.sort((a, b) => a - b);
  const p50 = pct(samples, 50);
  console.log(`approve -> write-back recorded (local forge, ${samples.length} approvals): p50 ${p50.toFixed(0)} ms, p99 ${pct(samples, 99).toFixed(0)} ms, max ${samples.at(-1)?.toFixed(0)} ms; ${commits} write-backs succeeded`);
  console.log(p50 < TARGET_P50_MS ? `OK: p50 under ${TARGET_P50_MS} ms` : `SLOW: p50 over ${TARGET_P50_MS} ms`);
  await db.$disconnect();
  process.exit(p50 < TARGET_P50_MS ? 0 : 1);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
