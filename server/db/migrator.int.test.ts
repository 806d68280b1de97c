import { createHash } from "node:crypto";
import { cp, mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { defaultMigrationsDir, migrate, MigrationError, migrationStatus, readMigrations } from "@/server/db/migrator.mjs";
import { emptyDatabases, withClient } from "@/server/testing/empty-database";

// Every test gets its own EMPTY database: the migrator is what builds the schema here.
const databases = emptyDatabases("mig");
const emptyDatabase = databases.create;
const tempDirs: string[] = [];

/** A migrations folder in $TMPDIR: `files` maps "<stamp>_<name>" to its SQL. */
async function migrationsDir(files: Record<string, string> = {}, copyReal = false): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "airlock-migrations-"));
  tempDirs.push(dir);
  if (copyReal) await cp(defaultMigrationsDir, dir, { recursive: true });
  for (const [name, sql] of Object.entries(files)) await writeMigration(dir, name, sql);
  return dir;
}

async function writeMigration(dir: string, name: string, sql: string) {
  await mkdir(join(dir, name), { recursive: true });
  await writeFile(join(dir, name, "migration.sql"), sql);
}

const sha256 = (text: string) => createHash("sha256").update(text, "utf8").digest("hex");

interface MigrationRow {
  id: string;
  migration_name: string;
  checksum: string;
  finished_at: Date | null;
  rolled_back_at: Date | null;
  applied_steps_count: number;
}
const rows = (url: string) =>
  withClient(url, async (c) => (await c.query<MigrationRow>(`SELECT * FROM "_prisma_migrations" ORDER BY migration_name`)).rows);
const tables = (url: string) =>
  withClient(url, async (c) =>
    (await c.query<{ t: string }>(`SELECT table_name AS t FROM information_schema.tables WHERE table_schema = 'public' ORDER BY 1`)).rows.map((r) => r.t),
  );

afterAll(async () => {
  for (const dir of tempDirs) await rm(dir, { recursive: true, force: true });
});

describe("migrate() on an empty database", () => {
  it("applies every migration, creating each table its SQL declares and recording sha256 checksums", async () => {
    const url = await emptyDatabase();
    const onDisk = await readMigrations();
    expect(onDisk.length).toBeGreaterThan(0);
    const logged: string[] = [];

    const applied = await migrate({ connectionString: url, log: (line) => logged.push(line) });

    expect(applied).toEqual(onDisk.map((m) => m.name));
    expect(logged.map((l) => l.split(" ")[1])).toEqual(applied);
    // Tables named by the SQL itself, so this does not lean on the drift check's model.
    const declared = new Set<string>();
    for (const m of onDisk) for (const [, t] of m.sql.matchAll(/CREATE TABLE "([^"]+)"/g)) declared.add(t!);
    expect(declared.size).toBeGreaterThan(20);
    expect(await tables(url)).toEqual([...declared, "_prisma_migrations"].sort());

    const recorded = await rows(url);
    expect(recorded.map((r) => r.migration_name)).toEqual(applied);
    for (const row of recorded) {
      // The checksum Prisma's CLI computes: sha256 of the file's bytes, hex.
      const file = await readFile(join(defaultMigrationsDir, row.migration_name, "migration.sql"), "utf8");
      expect(row.checksum).toBe(sha256(file));
      expect(row.finished_at).toBeInstanceOf(Date);
      expect(row.rolled_back_at).toBeNull();
      expect(row.applied_steps_count).toBe(1);
      expect(row.id).toMatch(/^[0-9a-f-]{36}$/);
    }
    expect(await migrationStatus({ connectionString: url })).toEqual({ applied, pending: [], latest: applied.at(-1) });
  });

  it("applies nothing and records nothing when run again", async () => {
    const url = await emptyDatabase();
    await migrate({ connectionString: url });
    const before = await rows(url);

    expect(await migrate({ connectionString: url })).toEqual([]);

    expect(await rows(url)).toEqual(before);
  });

  it("applies each file exactly once when four migrators race on the same database", async () => {
    const url = await emptyDatabase();
    // Not idempotent on purpose: a second CREATE TABLE fails and a second INSERT doubles the count.
    const dir = await migrationsDir({
      "001_counter": `CREATE TABLE counter (n int NOT NULL);`,
      "002_slow": `SELECT pg_sleep(0.3); CREATE TABLE slow (id int);`,
      "003_bump": `INSERT INTO counter VALUES (1);`,
      "004_more": `CREATE TABLE more (id int); INSERT INTO counter VALUES (2);`,
    });

    // allSettled: every migrator has finished (and disconnected) before anything is asserted.
    const settled = await Promise.allSettled([1, 2, 3, 4].map(() => migrate({ connectionString: url, dir })));

    expect(settled.filter((s) => s.status === "rejected")).toEqual([]);
    const results = settled.flatMap((s) => (s.status === "fulfilled" ? [s.value] : []));
    expect(results.flat().sort()).toEqual(["001_counter", "002_slow", "003_bump", "004_more"]);
    // The lock serialises whole runs: one migrator does the work, the others find it done.
    expect(results.filter((r) => r.length > 0)).toHaveLength(1);
    expect((await rows(url)).map((r) => r.migration_name)).toEqual(["001_counter", "002_slow", "003_bump", "004_more"]);
    const counter = await withClient(url, (c) => c.query<{ n: number }>("SELECT n FROM counter ORDER BY n"));
    expect(counter.rows).toEqual([{ n: 1 }, { n: 2 }]);
  });
});

describe("migrate() refuses an inconsistent history", () => {
  it("refuses an applied file that was edited, naming it, and applies nothing after it", async () => {
    const url = await emptyDatabase();
    const dir = await migrationsDir({}, true);
    const [first] = await readMigrations(dir);
    await migrate({ connectionString: url, dir });
    const before = await rows(url);
    const file = join(dir, first!.name, "migration.sql");
    await writeFile(file, `${await readFile(file, "utf8")}\n-- an afterthought\n`);
    await writeMigration(dir, "29990101000000_pending", `CREATE TABLE "ShouldNotExist" (id int);`);

    const error = await migrate({ connectionString: url, dir }).catch((e: unknown) => e);

    expect(error).toBeInstanceOf(MigrationError);
    expect((error as MigrationError).message).toContain(`${first!.name}/migration.sql was changed after it was applied`);
    expect((error as MigrationError).migration).toBe(first!.name);
    expect(await rows(url)).toEqual(before);
    expect(await tables(url)).not.toContain("ShouldNotExist");
  });

  it("rolls back a failing migration completely, names it, and stops there", async () => {
    const url = await emptyDatabase();
    const dir = await migrationsDir({
      "001_ok": `CREATE TABLE ok (id int);`,
      "002_bad": `CREATE TABLE half (id int); CREATE INDEX half_id ON half (id); INSERT INTO ok VALUES (1); SELECT 1 / 0;`,
      "003_after": `CREATE TABLE after_bad (id int);`,
    });

    const error = await migrate({ connectionString: url, dir }).catch((e: unknown) => e);

    expect(error).toBeInstanceOf(MigrationError);
    expect((error as MigrationError).message).toMatch(/^migration 002_bad failed: division by zero/);
    expect((error as MigrationError).migration).toBe("002_bad");
    expect(await tables(url)).toEqual(["_prisma_migrations", "ok"]);
    expect((await withClient(url, (c) => c.query("SELECT * FROM ok"))).rowCount).toBe(0);
    expect(await withClient(url, async (c) => (await c.query(`SELECT to_regclass('half_id') AS i`)).rows[0])).toEqual({ i: null });
    expect((await rows(url)).map((r) => r.migration_name)).toEqual(["001_ok"]);

    // Fixed, the same folder then applies from the failed file on.
    await writeMigration(dir, "002_bad", `CREATE TABLE half (id int);`);
    expect(await migrate({ connectionString: url, dir })).toEqual(["002_bad", "003_after"]);
  });

  it("reports an applied migration whose file has gone, and applies nothing", async () => {
    const url = await emptyDatabase();
    const dir = await migrationsDir({ "001_a": `CREATE TABLE a (id int);`, "002_b": `CREATE TABLE b (id int);` });
    await migrate({ connectionString: url, dir });
    await rm(join(dir, "002_b"), { recursive: true });
    await writeMigration(dir, "003_c", `CREATE TABLE c (id int);`);

    const error = await migrate({ connectionString: url, dir }).catch((e: unknown) => e);

    expect(error).toBeInstanceOf(MigrationError);
    expect((error as MigrationError).message).toMatch(/migration 002_b was applied to this database but its file .*002_b\/migration\.sql is missing/);
    expect((error as MigrationError).migration).toBe("002_b");
    expect(await tables(url)).toEqual(["_prisma_migrations", "a", "b"]);
    expect((await rows(url)).map((r) => r.migration_name)).toEqual(["001_a", "002_b"]);
  });
});

describe("migrationStatus()", () => {
  it("lists applied and pending migrations without changing the database", async () => {
    const url = await emptyDatabase();
    const dir = await migrationsDir({ "001_a": `CREATE TABLE a (id int);` });
    expect(await migrationStatus({ connectionString: url, dir })).toEqual({ applied: [], pending: ["001_a"], latest: null });
    expect(await tables(url)).toEqual([]);

    await migrate({ connectionString: url, dir });
    await writeMigration(dir, "002_b", `CREATE TABLE b (id int);`);

    expect(await migrationStatus({ connectionString: url, dir })).toEqual({ applied: ["001_a"], pending: ["002_b"], latest: "001_a" });
  });
});
