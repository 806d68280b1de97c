import { pathToFileURL } from "node:url";
import { createPrismaClient, type PrismaClient } from "@/server/db";
import { resolve } from "node:path";
import { env, requireDatabaseUrl } from "@/server/env";
import { ensureShippedPolicies } from "@/server/domain/policy/store";
import { seedAudit } from "./seed/audit";
import { seedPipelines } from "./seed/ci";
import { seedForge } from "./seed/forge";
import { seedForgeObjects } from "./seed/forge-objects";
import { seedPools } from "./seed/pools";
import { seedRepositories } from "./seed/repos";
import { seedRuns } from "./seed/runs";
import { seedStacks } from "./seed/stacks";
import { seedStory } from "./seed/story";
import { seedDeliveries, seedTriggerRules } from "./seed/triggers";
import { seedUsers } from "./seed/users";

// The demo seed: the local forge's repositories, users, repositories, CI objects, stacks, pools and grants,
// trigger rules, and ~30 runs with transcripts, artifacts, approvals and
// write-backs. Idempotent: rows are created when missing and never updated;
// runs are keyed by their dedupe key. `npm start` runs it on every start:
//
//   DATABASE_URL=... npx tsx prisma/seed.ts

export type SeedResult = { runsCreated: number; runsSkipped: number; ms: number };

export async function seed(db: PrismaClient, opts: { now?: Date; dataDir?: string } = {}): Promise<SeedResult> {
  const t0 = Date.now();
  const now = opts.now ?? new Date();
  // The local forge holds every seeded repository: its commits exist before any row names them.
  const dataDir = resolve(opts.dataDir ?? env.AIRLOCK_DATA_DIR);
  await seedForge(dataDir);
  // Sequential on purpose: one pooled connection, a few dozen set-based statements.
  // (Parallel calls would open more connections, and each costs more than the queries.)
  const { ids: users, addCredentials } = await seedUsers(db, now);
  const { repos, prs } = await seedRepositories(db, { now, dataDir }, users);
  const stacks = await seedStacks(db, now, users);
  const pools = await seedPools(db, now, stacks);
  const rules = await seedTriggerRules(db, now, repos, stacks);
  const pipelines = await seedPipelines(db, now, repos, prs);
  await seedDeliveries(db, now);
  await ensureShippedPolicies(db);
  const runs = await seedRuns(db, { now, dataDir, users, repos, prs, pipelines, stacks, pools, rules });
  // What the seeded write-backs name on the local forge: comment notes, published releases.
  await seedForgeObjects(db, dataDir);
  // The fix-forward loop's escalation and red-check attribution, by their own code.
  await seedStory(db, { now });
  await seedAudit(db, now, { users, repos, stacks, pools, rules });
  await addCredentials();
  return { runsCreated: runs.created, runsSkipped: runs.skipped, ms: Date.now() - t0 };
}

async function main() {
  const db = createPrismaClient(requireDatabaseUrl());
  try {
    const r = await seed(db);
    const what = r.runsCreated > 0 ? `${r.runsCreated} runs created` : "nothing new";
    process.stderr.write(`[seed] demo data ready: ${what}, ${r.runsSkipped} already present (${r.ms} ms)\n`);
  } finally {
    await db.$disconnect();
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((err: unknown) => {
    process.stderr.write(`[seed] failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  });
}
