#!/usr/bin/env node
// `npm test`: every suite, from a fresh clone. The same bootstrap as `npm start`
// (each runner brings its own throwaway PostgreSQL), then typecheck, lint (ESLint and
// knip), the audit of production dependencies, unit + integration (Vitest), the
// production build and e2e (Playwright in Debian's Chromium). Ends with one line
// `N passed, N failed, N skipped` summed from the runners' JSON reports, and exits
// non-zero on any failure or missing report.
//
//   --also-node=PATH       run unit + integration again on that Node binary (.ci/run: Node 22)
//   --also-node-missing=WHY  say why that second Node is not there (counted as 1 skipped)
import { spawnSync } from "node:child_process";
import { mkdirSync, readFileSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { parseArgs } from "node:util";
import { auditProductionDependencies } from "./lib/audit.mjs";
import { checkNode, ensureBuild, ensureDependencies, ensurePrismaClient, say } from "./lib/bootstrap.mjs";
import { repoRootPath as root } from "./lib/paths.mjs";
import { summarise } from "./lib/summary.mjs";

const { values: opts } = parseArgs({ options: { "also-node": { type: "string" }, "also-node-missing": { type: "string" } } });
const out = join(root, ".ci-out");
rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });
const bin = (name) => join(root, "node_modules", ".bin", name);
const env = { ...process.env, NEXT_TELEMETRY_DISABLED: "1", PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD: "1", DATABASE_URL: "" };
/** { name, ok, skipped?, seconds, note? }: a step whose `ok` is false is one failure. */
const steps = [];
const started = Date.now();

function step(name, cmd, args, extraEnv = {}) {
  const t = Date.now();
  say(`── ${name}`);
  const r = spawnSync(cmd, args, { cwd: root, stdio: "inherit", env: { ...env, ...extraEnv } });
  const ok = r.status === 0;
  steps.push({ name, ok, seconds: (Date.now() - t) / 1000 });
  if (!ok) say(`${name} FAILED (exit ${r.status ?? r.signal})`);
  return ok;
}

const readJson = (file) => {
  try {
    return JSON.parse(readFileSync(file, "utf8"));
  } catch {
    return null;
  }
};

try {
  checkNode();
} catch (err) {
  say(err.message);
  console.log("0 passed, 1 failed, 0 skipped");
  process.exit(1);
}
ensureDependencies();
ensurePrismaClient();

step("typecheck", bin("tsc"), ["--noEmit"]);
step("lint (eslint)", bin("eslint"), [".", "--max-warnings", "0"]);
// Unused files, exports and dependencies (knip.config.ts names the entry points).
step("lint (knip)", bin("knip"), []);
// The layering and no import cycles (.dependency-cruiser.cjs).
step("lint (dependency-cruiser)", "npm", ["run", "--silent", "lint:deps"]);

{
  const t = Date.now();
  const name = "audit (npm audit --omit=dev --audit-level=high)";
  say(`── ${name}`);
  const audit = await auditProductionDependencies({ cwd: root, env });
  for (const line of [audit.summary, ...audit.findings]) say(`  ${line}`);
  // Unavailable is not a pass: it is reported as skipped, with the registry's answer.
  steps.push({ name, ok: audit.status !== "failed", skipped: audit.status === "unavailable", note: audit.status === "ok" ? undefined : audit.summary, seconds: (Date.now() - t) / 1000 });
}

// The build comes before the Vitest suites: the `npm start` smoke test reuses it.
let built = true;
const buildStart = Date.now();
try {
  ensureBuild();
} catch (err) {
  say(String(err));
  built = false;
}
steps.push({ name: "build", ok: built, seconds: (Date.now() - buildStart) / 1000 });

const vitestArgs = (report) => ["run", "--reporter=default", "--reporter=json", `--outputFile.json=${join(out, report)}`];
const mainVitest = `unit + integration (vitest, node ${process.versions.node})`;
step(mainVitest, bin("vitest"), vitestArgs("vitest.json"));
if (built) {
  step("e2e (playwright)", bin("playwright"), ["test", "--reporter=list,json"], {
    PLAYWRIGHT_JSON_OUTPUT_NAME: join(out, "playwright.json"),
  });
}
const runtimes = [{ node: process.versions.node, vitestStep: mainVitest, vitest: readJson(join(out, "vitest.json")), playwright: readJson(join(out, "playwright.json")) }];

// The second Node: unit + integration only (e2e drives the same production build through the
// browser, not through Node's version). Its directory goes first on PATH, so whatever the tests
// start as `node` (tsx, with-db, the npm start smoke test) runs on it too.
if (opts["also-node"]) {
  const node = opts["also-node"];
  const version = spawnSync(node, ["-p", "process.versions.node"], { encoding: "utf8" }).stdout?.trim() || `at ${node}`;
  const name = `unit + integration (vitest, node ${version})`;
  step(name, node, [join(root, "node_modules", "vitest", "vitest.mjs"), ...vitestArgs("vitest-node-2.json")], {
    PATH: `${dirname(node)}:${process.env.PATH ?? ""}`,
  });
  runtimes.push({ node: version, vitestStep: name, vitest: readJson(join(out, "vitest-node-2.json")) });
} else if (opts["also-node-missing"]) {
  steps.push({ name: "unit + integration on a second Node", ok: true, skipped: true, note: opts["also-node-missing"], seconds: 0 });
}

const summary = summarise(steps, runtimes);
console.log("");
for (const line of summary.lines.slice(0, -1)) console.log(line);
console.log(`  total ${((Date.now() - started) / 1000).toFixed(1)} s`);
console.log(summary.lines.at(-1));
process.exit(summary.failed > 0 || summary.passed === 0 ? 1 : 0);
