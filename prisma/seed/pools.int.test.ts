import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import type { TaskKind } from "@/server/db";
import { getDb } from "@/server/db";
import { loadCurrentPolicy } from "@/server/domain/policy/decide";
import { loadAdmissionInputs, planAdmission } from "@/server/domain/runs/admit-attempt";
import { stackSnapshot } from "@/server/domain/stacks/spec";
import { scriptedSpec } from "@/server/queue/testing/fixtures";
import { seed } from "../seed";

// The seeded pools through the real admission (the runner_selection policy and the pure choice):
// read-only work on trusted refs gets an unprivileged runtime, write work the privileged one
// with only its grants, and code from forks the sandbox, never privileged.

const db = getDb();
let snapshot: ReturnType<typeof stackSnapshot>["snapshot"];
let repository: { id: string; fullName: string };

beforeAll(async () => {
  await seed(db, { dataDir: await mkdtemp(join(tmpdir(), "airlock-seed-pools-")) });
  const stack = await db.agentStack.findFirstOrThrow({ where: { name: "claude-code-ci-diagnoser" } });
  // The seeded stack's id (grants are per stack), asking for a model key and the write token.
  const spec = scriptedSpec({ adapter: { kind: "command", command: ["claude", "-p"], env: ["ANTHROPIC_API_KEY", "GITHUB_TOKEN"], outputFormat: "claude-stream-json" } });
  snapshot = stackSnapshot({ id: stack.id, name: stack.name, version: 1, spec }).snapshot;
  repository = await db.repository.findFirstOrThrow({ where: { trustTier: "trusted" }, select: { id: true, fullName: true } });
}, 60_000);

async function admitSeeded(taskKind: TaskKind, isFork: boolean) {
  const run = {
    id: "run",
    repositoryId: repository.id,
    taskKind,
    isFork,
    actor: "rule",
    actorUserId: null,
    triggerRuleId: "rule",
    stackId: snapshot.id,
    stackSnapshot: snapshot,
    repository: { fullName: repository.fullName, trustTier: "trusted" as const },
  };
  const plan = planAdmission({ inputs: await loadAdmissionInputs(db, run), policy: await loadCurrentPolicy(db, "runner_selection"), kubernetesAvailable: false, sandbox: { available: true, reason: null } });
  const d = plan.decision;
  return { pool: d.pool?.name, runtime: d.runtimeServiceAccount, granted: d.secretsGranted.map((s) => s.name).sort(), privileged: d.privilegedCredentials };
}

describe("seeded runner pools", () => {
  it.each(["diagnose", "triage"] as const)("a trusted %s run gets the read-only pool and an unprivileged runtime", async (taskKind) => {
    const a = await admitSeeded(taskKind, false);
    expect(a.pool).toBe("trusted-readonly");
    expect(a.runtime).toMatchObject({ name: "agent-runtime-readonly", privileged: false });
    expect(a.privileged).toBe(false);
    expect(a.granted).not.toContain("GITHUB_TOKEN");
  });

  it("a trusted repair run gets the privileged runtime and its write token", async () => {
    const a = await admitSeeded("repair", false);
    expect(a).toMatchObject({ pool: "trusted-local", runtime: { name: "agent-runtime-privileged", privileged: true }, privileged: true });
    expect(a.granted).toEqual(["ANTHROPIC_API_KEY", "GITHUB_TOKEN"]);
  });

  it.each(["diagnose", "repair"] as const)("a fork's %s run gets the sandbox, unprivileged, with no privileged secret", async (taskKind) => {
    const a = await admitSeeded(taskKind, true);
    expect(a).toMatchObject({ pool: "untrusted-sandbox", runtime: { privileged: false }, privileged: false });
    expect(a.granted).toEqual(["ANTHROPIC_API_KEY"]);
  });
});
