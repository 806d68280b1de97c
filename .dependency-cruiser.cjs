// The layering the tree promises, checked on every `npm run lint` (issue #16):
//   app/ pages         → server code through the server caller (components/: ESLint's
//                        no-restricted-imports in eslint.config.mjs, which editors show)
//   server/domain      → decides; never imports the queue's worker side, execution, the web
//                        server, tRPC or REST (jobs are enqueued through the leaf queue/enqueue)
//   server/queue/{jobs,enqueue} → a leaf: job contracts only, no domain code
//   server/execution   → runs agents; the domain tells it what, never the other way round
// and no import cycles anywhere (type-only imports count: a cycle of types is still a knot).
// Nor between domain areas (server/domain/<area>; scripts/area-cycles.mjs, in the same
// `npm run lint:deps`): their graph has no cycle, and reads as layers, an area importing its
// own layer or lower ones, never a higher one:
//   vocabulary   ci-events, events, context, policy, and the domain's top-level files (actor,
//                audit, access, input, refusable, versioned, inert-text)
//   records      github-app, stacks, ingest, pools, triggers, notifications, check-runs, runs
//                (lifecycle, transition), approvals (the change gate), repositories, and the
//                smaller config-files, deliveries, users, api-tokens, demo
//   processes    fixloop, triage; run-engine (claim, finish, cancel, decide: a run through the
//                gate and the loop); evaluation (what a delivery does); writebacks
//   use-cases    what spans all of these (the run page, manual dispatch, GitHub's requested
//                action), imported by no area
// Tests and their fixtures drive the whole stack on purpose (a job, a route, the worker).
const TESTS = "(\\.test\\.tsx?$|/fixtures/|/testing/|test-fixtures\\.ts$)";
// The entry points: the queue's worker side (all of server/queue but its leaf contracts), the web
// server, tRPC, REST and HTTP helpers, pages and components.
const ENTRY_POINTS = "server/(queue/(?!enqueue\\.ts$|jobs\\.ts$)|web/|trpc/|rest/|http/)|app/|components/";

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: "no-circular",
      severity: "error",
      comment: "An import cycle ties modules into one; split the shared part into its own file.",
      from: {},
      to: { circular: true },
    },
    {
      name: "domain-not-to-outer-layers",
      severity: "error",
      comment:
        "Domain functions are called by routes, jobs and the runner; they never reach back into them. " +
        "Enqueue jobs through server/queue/enqueue.ts and job contracts through server/queue/jobs.ts.",
      from: { path: "^server/domain/", pathNot: TESTS },
      to: {
        path: `^(server/execution/|${ENTRY_POINTS})`,
        // What execution promises in data (its event and report shapes, the Claude Code launch plan
        // the stack preview shows) is vocabulary the domain may read.
        pathNot: "^server/execution/(sandbox/(events|report|schemas|policy)|agents/claude-code/launch-plan)\\.ts$",
      },
    },
    {
      name: "queue-contracts-are-a-leaf",
      severity: "error",
      comment: "Job contracts and enqueue are imported by the domain, so they import no domain code.",
      from: { path: "^server/queue/(enqueue|jobs)\\.ts$" },
      to: { path: "^server/(domain|execution|queue/tasks|trpc|rest|web)/" },
    },
    {
      name: "execution-not-to-entry-points",
      severity: "error",
      comment: "Execution is started by the worker; it never imports the worker, tRPC, REST or the web server.",
      from: { path: "^server/execution/", pathNot: TESTS },
      to: { path: `^(${ENTRY_POINTS})` },
    },
    {
      name: "pages-through-the-server-caller",
      severity: "error",
      comment: "Pages read data through the server caller (server/trpc) and render components; no domain or database calls.",
      from: { path: "^app/", pathNot: "^app/api/" },
      to: {
        path: "^server/(domain/|db/(?!generated/enums)|execution/|queue/)",
        dependencyTypesNot: ["type-only"],
      },
    },
    {
      name: "api-routes-are-thin",
      severity: "error",
      comment: "Route handlers only wire HTTP to server/{http,rest,streaming,trpc,web}; logic lives in the domain behind them.",
      from: { path: "^app/api/" },
      to: { path: "^server/(execution|queue/(?!enqueue\\.ts$))/", dependencyTypesNot: ["type-only"] },
    },
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    exclude: { path: "^(node_modules|\\.next|server/db/generated|\\.airlock|test-results)/" },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
    enhancedResolveOptions: { exportsFields: ["exports"], conditionNames: ["import", "require", "node", "default"], extensions: [".ts", ".tsx", ".js", ".mjs"] },
  },
};
