import { verifyPassword } from "better-auth/crypto";
import parseDiff from "parse-diff";
import { beforeAll, describe, expect, it } from "vitest";
import { getDb, Prisma } from "@/server/db";
import { RunStatus } from "@/server/db/generated/enums";
import { zRunEventInput } from "@/server/domain/events/catalogue";
import { stackSnapshot, zStackSpec } from "@/server/domain/stacks/spec";
import { digestOf, sha256 } from "@/server/lib/digest";
import { seed } from "./seed";
import { demoLogins } from "./seed/users";

const db = getDb();

async function countAllTables(): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (const model of Object.values(Prisma.ModelName)) {
    const delegate = (db as unknown as Record<string, { count: () => Promise<number> }>)[model.charAt(0).toLowerCase() + model.slice(1)];
    if (!delegate) throw new Error(`no delegate for ${model}`);
    counts[model] = await delegate.count();
  }
  return counts;
}

describe("demo seed", () => {
  beforeAll(async () => {
    await seed(db);
  }, 60_000);

  it("seeds at least 30 runs with a run in every RunStatus", async () => {
    const groups = await db.agentDispatchRun.groupBy({ by: ["status"], _count: { _all: true } });
    const seen = new Set(groups.map((g) => g.status));
    for (const status of Object.values(RunStatus)) expect(seen, `a ${status} run`).toContain(status);
    expect(groups.reduce((n, g) => n + g._count._all, 0)).toBeGreaterThanOrEqual(30);
  });

  it("numbers each run's events 1..lastEventSeq without gaps, in time order, all valid catalogue events", async () => {
    const runs = await db.agentDispatchRun.findMany({ select: { id: true, number: true, lastEventSeq: true } });
    const events = await db.runEvent.findMany({ orderBy: [{ runId: "asc" }, { seq: "asc" }], select: { runId: true, seq: true, type: true, payload: true, createdAt: true } });
    for (const run of runs) {
      const mine = events.filter((e) => e.runId === run.id);
      expect(mine.map((e) => e.seq), `run #${run.number}`).toEqual(Array.from({ length: mine.length }, (_, i) => i + 1));
      expect(run.lastEventSeq, `run #${run.number}`).toBe(mine.length);
      for (let i = 1; i < mine.length; i++) expect(mine[i]!.createdAt.getTime()).toBeGreaterThanOrEqual(mine[i - 1]!.createdAt.getTime());
    }
    for (const e of events) {
      const parsed = zRunEventInput.safeParse({ type: e.type, payload: e.payload });
      expect(parsed.success, `${e.type} #${e.seq}: ${parsed.error?.message}`).toBe(true);
    }
  });

  it("stores stack versions whose spec passes zStackSpec, and runs whose snapshot digest matches", async () => {
    const versions = await db.agentStackVersion.findMany({ include: { stack: { select: { name: true } } } });
    expect(versions.length).toBeGreaterThanOrEqual(4);
    for (const v of versions) {
      const spec = zStackSpec.parse(v.spec);
      expect(v.digest).toBe(stackSnapshot({ id: v.stackId, name: v.stack.name, version: v.version, spec }).digest);
    }
    const runs = await db.agentDispatchRun.findMany({ select: { stackSnapshot: true, stackDigest: true, contextBundle: true, contextDigest: true, prompt: true, promptHash: true } });
    for (const r of runs) {
      expect(digestOf(r.stackSnapshot)).toBe(r.stackDigest);
      expect(digestOf(r.contextBundle)).toBe(r.contextDigest);
      expect(r.promptHash).toBe(`sha256:${sha256(r.prompt)}`);
      expect(r.prompt).not.toMatch(/\{\{\s*[\w.]+\s*\}\}/);
    }
  });

  it("stores artifacts whose digest and size match their content, and patches that are well-formed unified diffs", async () => {
    const artifacts = await db.artifact.findMany();
    expect(new Set(artifacts.map((a) => a.kind))).toEqual(new Set(["patch", "diagnosis", "report"]));
    for (const a of artifacts) {
      expect(a.digest).toBe(`sha256:${sha256(a.content ?? "")}`);
      expect(a.sizeBytes).toBe(Buffer.byteLength(a.content ?? "", "utf8"));
    }
    for (const patch of artifacts.filter((a) => a.kind === "patch")) {
      const files = parseDiff(patch.content ?? "");
      expect(files.length).toBeGreaterThan(0);
      for (const chunk of files.flatMap((f) => f.chunks)) {
        expect(chunk.changes.filter((c) => c.type !== "add").length).toBe(chunk.oldLines);
        expect(chunk.changes.filter((c) => c.type !== "del").length).toBe(chunk.newLines);
      }
    }
  });

  it("links approvals, write-backs and attempts consistently", async () => {
    const approvals = await db.approvalRequest.findMany({ include: { artifact: true, writeBack: true } });
    expect(new Set(approvals.map((a) => a.status))).toEqual(new Set(["pending", "approved", "rejected", "expired", "executed", "failed"]));
    for (const a of approvals) {
      if (a.artifact) expect(a.artifactDigest).toBe(a.artifact.digest);
      if (a.status === "pending") expect(a.expiresAt.getTime()).toBeGreaterThan(Date.now());
      if (a.status === "executed") expect(a.writeBack?.outcome).toBe("succeeded");
      if (a.status === "rejected") expect(a.reason).toBeTruthy();
    }
    const attempts = await db.dispatchAttempt.findMany();
    for (const a of attempts) expect(a.fencingToken).toBe(a.number);
    const fork = await db.agentDispatchRun.findFirst({ where: { isFork: true, runnerPoolId: { not: null } }, include: { attempts: { include: { runnerPool: true } } } });
    expect(fork?.attempts[0]?.runnerPool?.trustTier).toBe("untrusted");
    expect(await db.agentDispatchRun.count({ where: { parentRunId: { not: null } } })).toBeGreaterThan(0);
  });

  it("gives each demo user a credential account that verifies the demo password", async () => {
    for (const login of demoLogins) {
      const user = await db.user.findUniqueOrThrow({ where: { email: login.email }, include: { accounts: true } });
      const credential = user.accounts.find((a) => a.providerId === "credential");
      expect(credential?.accountId).toBe(user.id);
      expect(await verifyPassword({ hash: credential!.password!, password: login.password })).toBe(true);
    }
  });

  it("adds nothing when run again, even days later", async () => {
    const before = await countAllTables();
    const again = await seed(db, { now: new Date(Date.now() + 3 * 24 * 3600_000) });
    expect(again.runsCreated).toBe(0);
    expect(await countAllTables()).toEqual(before);
  });
});
