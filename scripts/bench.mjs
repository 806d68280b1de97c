#!/usr/bin/env node
// `npm run bench -- <name> [args]`: runs bench/<name>.ts (no name: lists them).
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { repoRootPath as root } from "./lib/paths.mjs";

const [name, ...args] = process.argv.slice(2);
const available = readdirSync(join(root, "bench"))
  .filter((f) => f.endsWith(".ts") && !f.includes(".test."))
  .map((f) => f.replace(/\.ts$/, ""));
if (!name || !existsSync(join(root, "bench", `${name}.ts`))) {
  console.log(`usage: npm run bench -- <name>\navailable: ${available.join(", ") || "(none)"}`);
  process.exit(name ? 1 : 0);
}
const r = spawnSync(join(root, "node_modules", ".bin", "tsx"), [join(root, "bench", `${name}.ts`), ...args], {
  stdio: "inherit",
  cwd: root,
});
process.exit(r.status ?? 1);
