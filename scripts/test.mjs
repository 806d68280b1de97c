#!/usr/bin/env node
// `npm test`: every suite, from a fresh clone. The same bootstrap as `npm start`
// (each runner brings its own throwaway PostgreSQL), then typecheck, lint, unit +
// integration (Vitest), the production build and e2e (Playwright in Debian's
// Chromium). Ends with one line `N passed, N failed, N skipped` summed from the
// runners' JSON reports, and exits non-zero on any failure or missing report.
import { spawnSync } from "node:child_process";
import { mkdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { checkNode, ensureBuild, ensureDependencies, ensurePrismaClient, say } from "./lib/bootstrap.mjs";
import { repoRootPath as root } from "./lib/paths.mjs";

const out = join(root, ".ci-out");
rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });
const bin = (name) => join(root, "node_modules", ".bin", name);
const env = { ...process.env, NEXT_TELEMETRY_DISABLED: "1", PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD: "1", DATABASE_URL: "" };
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

checkNode();
ensureDependencies();
ensurePrismaClient();

step("typecheck", bin("tsc"), ["--noEmit"]);
step("lint (eslint)", bin("eslint"), [".", "--max-warnings", "0"]);
// Unused files, exports and dependencies (knip.config.ts names the entry points).
step("lint (knip)", bin("knip"), []);
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
step("unit + integration (vitest)", bin("vitest"), [
  "run",
  "--reporter=default",
  "--reporter=json",
  `--outputFile.json=${join(out, "vitest.json")}`,
]);
if (built) {
  step("e2e (playwright)", bin("playwright"), ["test", "--reporter=list,json"], {
    PLAYWRIGHT_JSON_OUTPUT_NAME: join(out, "playwright.json"),
  });
}

const v = readJson(join(out, "vitest.json"));
const p = readJson(join(out, "playwright.json"));
let passed = 0;
let failed = 0;
let skipped = 0;
if (v) {
  passed += v.numPassedTests;
  failed += v.numFailedTests;
  skipped += v.numPendingTests + (v.numTodoTests ?? 0);
}
if (p) {
  passed += p.stats.expected + p.stats.flaky;
  failed += p.stats.unexpected;
  skipped += p.stats.skipped;
}
// A failed typecheck, lint or build, or a missing report, is a failure too.
const stepFailures = steps.filter((s) => !s.ok && !/vitest|playwright/.test(s.name)).length;
const missing = [!v && "vitest", !p && "playwright"].filter(Boolean);
failed += stepFailures + missing.length;
if (v && v.numFailedTests === 0 && steps.find((s) => s.name.startsWith("unit"))?.ok === false) failed += 1;

console.log("");
for (const s of steps) console.log(`  ${s.ok ? "ok  " : "FAIL"} ${s.name}${s.seconds ? ` (${s.seconds.toFixed(1)} s)` : ""}`);
if (missing.length) console.log(`  missing report: ${missing.join(", ")}`);
console.log(`  total ${((Date.now() - started) / 1000).toFixed(1)} s`);
console.log(`${passed} passed, ${failed} failed, ${skipped} skipped`);
process.exit(failed > 0 || passed === 0 ? 1 : 0);
