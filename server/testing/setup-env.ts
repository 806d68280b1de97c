import { randomBytes } from "node:crypto";
import pg from "pg";
import { afterAll, inject } from "vitest";

// A database per test file, cloned from the migrated template: files run in
// parallel without seeing each other's rows, and nothing needs cleaning up.
const template = new URL(inject("templateDatabaseUrl"));
const templateName = template.pathname.slice(1);
const name = `t_${randomBytes(6).toString("hex")}`;

const admin = new pg.Client({ connectionString: Object.assign(new URL(template), { pathname: "/postgres" }).toString() });
await admin.connect();
await admin.query(`CREATE DATABASE "${name}" TEMPLATE "${templateName}"`);
await admin.end();

const url = Object.assign(new URL(template), { pathname: `/${name}` }).toString();
process.env.DATABASE_URL = url;
// Let better-auth and the env module start in tests without a configured secret.
process.env.BETTER_AUTH_SECRET ??= "test-secret-not-for-production-0123456789";
process.env.AIRLOCK_URL ??= "http://localhost:3000";

afterAll(async () => {
  const { disconnectDb } = await import("./db");
  await disconnectDb();
  const drop = new pg.Client({ connectionString: Object.assign(new URL(template), { pathname: "/postgres" }).toString() });
  await drop.connect();
  await drop.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
  await drop.end();
});
