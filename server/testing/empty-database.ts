import { randomBytes } from "node:crypto";
import pg from "pg";
import { afterAll, inject } from "vitest";

// EMPTY databases on the test server (not clones of the migrated template), for tests
// where the migrator itself builds the schema. Every database made here is dropped
// after the file's tests.

export async function withClient<T>(url: string, fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/** Call at a test file's top level: returns `create()`, which makes a new empty database and gives its URL. */
export function emptyDatabases(prefix: string) {
  const server = new URL(inject("templateDatabaseUrl"));
  const urlFor = (db: string) => Object.assign(new URL(server), { pathname: `/${db}` }).toString();
  const created: string[] = [];
  afterAll(async () => {
    await withClient(urlFor("postgres"), async (c) => {
      for (const name of created) await c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    });
  });
  return {
    async create(): Promise<string> {
      const name = `${prefix}_${randomBytes(6).toString("hex")}`;
      await withClient(urlFor("postgres"), (c) => c.query(`CREATE DATABASE "${name}" TEMPLATE template0`));
      created.push(name);
      return urlFor(name);
    },
  };
}
