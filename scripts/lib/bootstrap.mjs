// The bootstrap shared by `npm start` and `npm test`: install dependencies when
// missing or stale, generate the Prisma client, build when the build is stale.
// Plain Node with no dependencies: it runs before `npm ci` has.
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, lstatSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { repoRootPath as root } from "./paths.mjs";

export const say = (line) => process.stdout.write(`\x1b[2m[airlock]\x1b[0m ${line}\n`);

export function run(cmd, args, opts = {}) {
  const r = spawnSync(cmd, args, { cwd: root, stdio: "inherit", ...opts });
  if (r.status !== 0) {
    throw new Error(`\`${cmd} ${args.join(" ")}\` failed (exit ${r.status ?? r.signal})`);
  }
}

/**
 * Which Node runs this, against the versions Airlock supports (package.json `engines`, .nvmrc,
 * and the two CI runs on: .ci/run). Older than 20.19, 21, or 22 before 22.12 is refused: the
 * toolchain needs `require()` of ES modules (vite, vitest, knip say so in their engines). Newer
 * than 22 is allowed with a warning: it is not tested.
 */
export function nodeSupport(version = process.versions.node) {
  const [major, minor] = version.split(".").map(Number);
  const supported = "Node 20.19+ or 22.12+ (see .nvmrc)";
  if ((major === 20 && minor >= 19) || (major === 22 && minor >= 12)) return { verdict: "supported" };
  if (major > 22) return { verdict: "untested", message: `Node ${version} is not tested: Airlock supports ${supported}; going on` };
  return { verdict: "unsupported", message: `Node ${version} is not supported: Airlock needs ${supported}` };
}

/** Throws on an unsupported Node; warns on an untested one. */
export function checkNode(version = process.versions.node) {
  const { verdict, message } = nodeSupport(version);
  if (verdict === "unsupported") throw new Error(message);
  if (verdict === "untested") say(`warning: ${message}`);
}

const lockDigest = () => createHash("sha256").update(readFileSync(join(root, "package-lock.json"))).digest("hex");

/**
 * `npm ci` unless node_modules was installed from exactly this lockfile. The
 * lockfile's digest is stamped into node_modules after an install (content,
 * not mtimes: a fresh copy or checkout of the same lockfile needs no install).
 */
export function ensureDependencies() {
  const stamp = join(root, "node_modules", ".airlock-lockfile-sha256");
  const digest = lockDigest();
  if (existsSync(stamp) && readFileSync(stamp, "utf8") === digest) return false;
  const npmMarker = join(root, "node_modules", ".package-lock.json");
  // Installed by hand (npm ci / npm install) after the last lockfile change: trust it.
  if (existsSync(npmMarker) && statSync(npmMarker).mtimeMs >= statSync(join(root, "package-lock.json")).mtimeMs) {
    writeFileSync(stamp, digest);
    return false;
  }
  // A linked node_modules belongs to another checkout: reinstalling through the
  // link would wipe that checkout's dependencies.
  if (existsSync(join(root, "node_modules")) && lstatSync(join(root, "node_modules")).isSymbolicLink()) {
    throw new Error("node_modules is a link to another checkout whose lockfile differs; install there");
  }
  say("installing dependencies (npm ci)…");
  run("npm", ["ci", "--strict-allow-scripts", "--no-audit", "--no-fund"]);
  writeFileSync(stamp, digest);
  return true;
}

export function ensurePrismaClient() {
  const generated = join(root, "server", "db", "generated", "client.ts");
  const schema = join(root, "prisma", "schema.prisma");
  if (existsSync(generated) && statSync(generated).mtimeMs >= statSync(schema).mtimeMs) return;
  say("generating the Prisma client…");
  run(join(root, "node_modules", ".bin", "prisma"), ["generate"]);
}

const BUILD_INPUTS = ["app", "components", "server", "public", "prisma/schema.prisma", "next.config.ts", "package-lock.json", "postcss.config.mjs", "tsconfig.json", "proxy.ts"];
const SKIP = new Set(["node_modules", ".next", "generated"]);

function* files(path) {
  if (!existsSync(path)) return;
  const st = statSync(path);
  if (st.isFile()) {
    yield path;
    return;
  }
  for (const entry of readdirSync(path, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
    if (SKIP.has(entry.name)) continue;
    if (/\.(test|int\.test)\.tsx?$/.test(entry.name)) continue;
    yield* files(join(path, entry.name));
  }
}

/** A digest of everything the production build depends on. */
export function sourceDigest() {
  const h = createHash("sha256");
  for (const input of BUILD_INPUTS) {
    for (const f of files(join(root, input))) {
      h.update(relative(root, f));
      h.update(readFileSync(f));
    }
  }
  return h.digest("hex");
}

const buildStamp = () => join(root, ".next", "airlock-source-digest");

/** Whether .next holds a build of exactly the current sources. */
export function buildIsCurrent(digest = sourceDigest()) {
  return existsSync(join(root, ".next", "BUILD_ID")) && existsSync(buildStamp()) && readFileSync(buildStamp(), "utf8") === digest;
}

/** `next build` unless .next holds a build of exactly these sources. */
export function ensureBuild({ force = false } = {}) {
  const stamp = buildStamp();
  const digest = sourceDigest();
  if (!force && buildIsCurrent(digest)) return false;
  say("building the console (next build)…");
  run(join(root, "node_modules", ".bin", "next"), ["build"], {
    env: { ...process.env, NEXT_TELEMETRY_DISABLED: "1", NODE_ENV: "production" },
  });
  writeFileSync(stamp, digest);
  return true;
}
