// Airlock's migrator. Prisma's CLI cannot fetch its migration engine on every
// machine, so SQL files in Prisma's layout (prisma/migrations/<stamp>_<name>/
// migration.sql) are applied here: in name order, under an advisory lock (two
// processes migrating at once apply each file exactly once), one transaction
// per file, recorded with a sha256 checksum in a `_prisma_migrations` table that
// has Prisma's own shape, so `prisma migrate status` agrees where the CLI works.
// Plain ESM so the bootstrap scripts can run it before any TypeScript is built.
import { createHash, randomUUID } from "node:crypto";
import { existsSync } from "node:fs";
import { readdir, readFile } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { Logger, runMigrations } from "graphile-worker";
import pg from "pg";

export const defaultMigrationsDir = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..", "prisma", "migrations");

// An arbitrary, fixed key: every Airlock migrator contends for the same lock.
const LOCK_KEY = 727_231_001;

const CREATE_TABLE = `
CREATE TABLE IF NOT EXISTS "_prisma_migrations" (
  "id"                  VARCHAR(36) PRIMARY KEY NOT NULL,
  "checksum"            VARCHAR(64) NOT NULL,
  "finished_at"         TIMESTAMPTZ,
  "migration_name"      VARCHAR(255) NOT NULL,
  "logs"                TEXT,
  "rolled_back_at"      TIMESTAMPTZ,
  "started_at"          TIMESTAMPTZ NOT NULL DEFAULT now(),
  "applied_steps_count" INTEGER NOT NULL DEFAULT 0
)`;

export class MigrationError extends Error {
  /** @param {string} message @param {string} migration */
  constructor(message, migration) {
    super(message);
    this.name = "MigrationError";
    this.migration = migration;
  }
}

export const checksum = (/** @type {string} */ sql) => createHash("sha256").update(sql).digest("hex");

/**
 * The migration files on disk, in the order they apply.
 * @param {string} dir
 * @returns {Promise<{ name: string, sql: string, checksum: string }[]>}
 */
export async function readMigrations(dir = defaultMigrationsDir) {
  const entries = await readdir(/* turbopackIgnore: true */ dir, { withFileTypes: true });
  const names = entries.filter((e) => e.isDirectory()).map((e) => e.name).sort();
  const out = [];
  for (const name of names) {
    const file = join(dir, name, "migration.sql");
    if (!existsSync(file)) continue;
    const sql = await readFile(/* turbopackIgnore: true */ file, "utf8");
    out.push({ name, sql, checksum: checksum(sql) });
  }
  return out;
}

/**
 * Compares the files with what the database recorded. Throws naming the file
 * when an applied migration was edited afterwards or has disappeared.
 * @param {{ name: string, checksum: string }[]} files
 * @param {{ migration_name: string, checksum: string }[]} applied
 */
function verifyApplied(files, applied) {
  const byName = new Map(files.map((f) => [f.name, f]));
  for (const row of applied) {
    const file = byName.get(row.migration_name);
    if (!file) {
      throw new MigrationError(
        `migration ${row.migration_name} was applied to this database but its file prisma/migrations/${row.migration_name}/migration.sql is missing`,
        row.migration_name,
      );
    }
    if (file.checksum !== row.checksum) {
      throw new MigrationError(
        `migration prisma/migrations/${row.migration_name}/migration.sql was changed after it was applied ` +
          `(checksum ${row.checksum.slice(0, 12)}… recorded, ${file.checksum.slice(0, 12)}… on disk); ` +
          "add a new migration instead of editing an applied one",
        row.migration_name,
      );
    }
  }
}

async function appliedRows(client) {
  const { rows } = await client.query(
    `SELECT migration_name, checksum FROM "_prisma_migrations"
     WHERE finished_at IS NOT NULL AND rolled_back_at IS NULL ORDER BY migration_name`,
  );
  return rows;
}

/**
 * Applies pending migrations. Returns the names it applied.
 * @param {{ connectionString: string, dir?: string, log?: (line: string) => void }} options
 * @returns {Promise<string[]>}
 */
export async function migrate({ connectionString, dir = defaultMigrationsDir, log = () => {} }) {
  const files = await readMigrations(dir);
  const client = new pg.Client({ connectionString });
  await client.connect();
  try {
    // Session-level lock: held across the per-file transactions below.
    await client.query("SELECT pg_advisory_lock($1)", [LOCK_KEY]);
    await client.query(CREATE_TABLE);
    const applied = await appliedRows(client);
    verifyApplied(files, applied);
    const done = new Set(applied.map((r) => r.migration_name));
    const appliedNow = [];
    for (const file of files) {
      if (done.has(file.name)) continue;
      const started = Date.now();
      await client.query("BEGIN");
      try {
        await client.query(file.sql); // simple protocol: a file may hold many statements
        await client.query(
          `INSERT INTO "_prisma_migrations" (id, checksum, migration_name, started_at, finished_at, applied_steps_count)
           VALUES ($1, $2, $3, to_timestamp($4 / 1000.0), now(), 1)`,
          [randomUUID(), file.checksum, file.name, started],
        );
        await client.query("COMMIT");
      } catch (err) {
        await client.query("ROLLBACK").catch(() => {});
        throw new MigrationError(`migration ${file.name} failed: ${err instanceof Error ? err.message : err}`, file.name);
      }
      log(`applied ${file.name} (${Date.now() - started} ms)`);
      appliedNow.push(file.name);
    }
    return appliedNow;
  } finally {
    await client.query("SELECT pg_advisory_unlock($1)", [LOCK_KEY]).catch(() => {});
    await client.end();
  }
}

/**
 * What is applied and what is pending, without changing anything.
 * @param {{ connectionString?: string, client?: pg.ClientBase, dir?: string }} options
 * @returns {Promise<{ applied: string[], pending: string[], latest: string | null }>}
 */
export async function migrationStatus({ connectionString, client: given, dir = defaultMigrationsDir }) {
  const files = await readMigrations(dir);
  const client = given ?? new pg.Client({ connectionString });
  if (!given) await client.connect();
  try {
    const { rows: exists } = await client.query(`SELECT to_regclass('"_prisma_migrations"') IS NOT NULL AS present`);
    const applied = exists[0]?.present ? (await appliedRows(client)).map((r) => r.migration_name) : [];
    const set = new Set(applied);
    return { applied, pending: files.filter((f) => !set.has(f.name)).map((f) => f.name), latest: applied.at(-1) ?? null };
  } finally {
    if (!given) await client.end();
  }
}

/**
 * graphile-worker keeps its own schema (`graphile_worker`) and migrates it
 * itself; install it with ours so jobs can be added in the same transaction
 * as the state change they belong to, before any worker has started.
 * @param {string} connectionString
 */
export async function installQueueSchema(connectionString) {
  await runMigrations({ connectionString, logger: quietLogger });
}

// graphile-worker logs migrations at info level on every start; keep warnings.
const quietLogger = new Logger(() => (level, message) => {
  if (level === "error" || level === "warning") process.stderr.write(`[queue] ${message}\n`);
});
