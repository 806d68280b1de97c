import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { getDb, type Prisma } from "@/server/db";
import { claimNextAttempt } from "@/server/domain/run-engine/claim-attempt";
import { stackSnapshot, zStackSpec } from "@/server/domain/stacks/spec";
import { seed } from "../seed";

// The seeded claude-code-ci-diagnoser runs the Claude Code CLI built from the stack, its model
// API key a grant by name. Offline, with no key configured on the server, a run of it is
// refused at the claim's admission with the variable to set, never "command not found".

const db = getDb();

beforeAll(async () => {
  delete process.env.AIRLOCK_SECRET_ANTHROPIC_API_KEY;
  await seed(db, { dataDir: await mkdtemp(join(tmpdir(), "airlock-seed-claude-")) });
}, 60_000);

async function queuedRun() {
  const stack = await db.agentStack.findFirstOrThrow({ where: { name: "claude-code-ci-diagnoser" }, include: { versions: { orderBy: { version: "desc" }, take: 1 } } });
  const version = stack.versions[0]!;
  const spec = zStackSpec.parse(version.spec);
  const snap = stackSnapshot({ id: stack.id, name: stack.name, version: version.version, spec });
  // As the seeded rule would start it: a diagnose run on a trusted repository.
  const rule = await db.triggerRule.findFirstOrThrow({ where: { name: "failed-check-suggest-diagnosis" } });
  const repository = await db.repository.findFirstOrThrow({ where: { trustTier: "trusted", disabledAt: null } });
  const run = await db.agentDispatchRun.create({
    data: {
      title: "Seeded Claude Code stack, no key",
      repositoryId: repository.id,
      source: "manual",
      taskKind: "diagnose",
      actor: `rule:${rule.name}`,
      triggerRuleId: rule.id,
      status: "queued",
      headSha: "0".repeat(40),
      headBranch: repository.defaultBranch,
      isFork: false,
      stackId: stack.id,
      stackVersion: version.version,
      stackSnapshot: snap.snapshot as Prisma.InputJsonValue,
      stackDigest: snap.digest,
      contextBundle: {},
      contextDigest: "sha256:none",
      prompt: "Diagnose.",
      promptHash: "sha256:none",
      dedupeKey: `seed-claude:${Date.now()}`,
    },
  });
  return { spec, run };
}

describe("the seeded claude-code-ci-diagnoser", () => {
  it("is a claude-code stack whose key is the secret anthropic-api-key, granted to it by name", async () => {
    const { spec } = await queuedRun();
    expect(spec.adapter).toMatchObject({ kind: "claude-code", apiKeySecret: "anthropic-api-key" });
    const stack = await db.agentStack.findFirstOrThrow({ where: { name: "claude-code-ci-diagnoser" } });
    expect(await db.secretGrant.count({ where: { secretName: "anthropic-api-key", stackId: stack.id } })).toBe(1);
  });

  it("with no key on the server, a run of it is refused at admission with the variable to set", async () => {
    const { run } = await queuedRun();
    const claim = await claimNextAttempt({ db, runId: run.id, workerRef: "test", kubernetesAvailable: false, sandbox: { available: true, reason: null } });
    expect(claim).toMatchObject({ kind: "refused" });
    expect(claim.kind === "refused" && claim.reason).toBe(
      "the model API key has no value: set AIRLOCK_SECRET_ANTHROPIC_API_KEY on the Airlock server (the secret anthropic-api-key, granted to claude-code-ci-diagnoser, is read from it)",
    );
    const attempt = await db.dispatchAttempt.findFirstOrThrow({ where: { runId: run.id } });
    expect(attempt).toMatchObject({ status: "failed", startedAt: null });
  });
});
