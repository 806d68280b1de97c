// Migration 20261130000200_grant_named_pools on a database that already holds grants: every
// existing Secret and Config grant keeps its trust-tier scope (and names no pool), so nothing an
// admin granted before named pools reaches more or fewer pools afterwards.
import { cp, mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { defaultMigrationsDir, migrate } from "@/server/db/migrator.mjs";
import { emptyDatabases, withClient } from "@/server/testing/empty-database";

const NAMED_POOLS = "20261130000200_grant_named_pools";
const databases = emptyDatabases("grant_scope");
const dirs: string[] = [];
afterAll(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

/** A migrations folder holding every migration before NAMED_POOLS (and the lock file). */
async function migrationsBefore(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "airlock-migrations-"));
  dirs.push(dir);
  for (const entry of await readdir(defaultMigrationsDir)) {
    if (entry >= NAMED_POOLS && !entry.endsWith(".toml")) continue;
    await cp(join(defaultMigrationsDir, entry), join(dir, entry), { recursive: true });
  }
  return dir;
}

describe(NAMED_POOLS, () => {
  it("backfills existing grants with the trust-tier scope and no named pools", async () => {
    const url = await databases.create();
    const dir = await migrationsBefore();
    await migrate({ connectionString: url, dir });
    await withClient(url, async (c) => {
      await c.query(`INSERT INTO "SecretGrant" ("id", "secretName", "privileged", "trustedPoolsOnly", "taskKinds", "updatedAt")
                     VALUES ('s1', 'GITHUB_TOKEN', true, true, '{repair}', now()), ('s2', 'SENTRY_DSN', false, false, '{}', now())`);
      await c.query(`INSERT INTO "ConfigGrant" ("id", "configMapName", "trustedPoolsOnly", "updatedAt") VALUES ('c1', 'ci-endpoints', false, now())`);
    });

    await cp(join(defaultMigrationsDir, NAMED_POOLS), join(dir, NAMED_POOLS), { recursive: true });
    await migrate({ connectionString: url, dir });

    await withClient(url, async (c) => {
      const secrets = await c.query(`SELECT "id", "poolScope"::text AS "poolScope", "poolIds", "trustedPoolsOnly" FROM "SecretGrant" ORDER BY "id"`);
      expect(secrets.rows).toEqual([
        { id: "s1", poolScope: "trust_tier", poolIds: [], trustedPoolsOnly: true },
        { id: "s2", poolScope: "trust_tier", poolIds: [], trustedPoolsOnly: false },
      ]);
      const configs = await c.query(`SELECT "id", "poolScope"::text AS "poolScope", "poolIds" FROM "ConfigGrant"`);
      expect(configs.rows).toEqual([{ id: "c1", poolScope: "trust_tier", poolIds: [] }]);
    });
  });
});
