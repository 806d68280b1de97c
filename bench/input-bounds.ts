// Bounded input: what a hostile policies.check costs (issue 14: 10,000 empty rules answered
// 35.7 MB after 1.3 s of CPU), side by side with an honest check of the shipped CI-triage
// policy, through tRPC's fetch handler with the app's router and error formatter, in process.
// Run: npm run bench -- input-bounds
import { performance } from "node:perf_hooks";
import { fetchRequestHandler } from "@trpc/server/adapters/fetch";
import { createPrismaClient } from "@/server/db";
import { ciTriagePolicy } from "@/server/domain/policy/shipped/ci-triage";
import { appRouter } from "@/server/trpc/root";
import { createTRPCContext } from "@/server/trpc/init";

const TARGET_MS = 100;
const TARGET_BYTES = 64 * 1024;
const RUNS = 60;

// An admin needs no membership lookup, so nothing here reaches the database (Prisma connects
// lazily; this client never does).
const db = createPrismaClient("postgresql://bench@127.0.0.1:9/none");
const admin = { id: "bench-admin", email: "bench@airlock.local", name: "Bench", isAdmin: true };

async function call(input: unknown) {
  const started = performance.now();
  const res = await fetchRequestHandler({
    endpoint: "/api/trpc",
    req: new Request("http://localhost/api/trpc/policies.check", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ json: input }) }),
    router: appRouter,
    createContext: () => createTRPCContext({ user: admin, db }),
  });
  const bytes = (await res.arrayBuffer()).byteLength;
  return { status: res.status, ms: performance.now() - started, bytes };
}

const base = { kind: "ci_triage", name: "x", subject: "build_failure", properties: [{ name: "a", type: "boolean" }], defaults: [{ property: "a", value: true, explanation: "x" }] };
const cases: [string, unknown][] = [
  ["reference: the shipped ci_triage policy (valid)", { definition: ciTriagePolicy }],
  ["10,000 empty rules", { definition: { ...base, rules: Array(10_000).fill({}) } }],
  ["200 rules, every field wrong", { definition: { ...base, rules: Array(200).fill({ name: "NOT snake", when: {}, then: {} }) } }],
];

const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))]!;
let ok = true;
for (const [name, input] of cases) {
  for (let i = 0; i < 5; i++) await call(input); // warm
  const runs = [];
  for (let i = 0; i < RUNS; i++) runs.push(await call(input));
  const ms = runs.map((r) => r.ms);
  const { status, bytes } = runs[0]!;
  const hostile = !name.startsWith("reference");
  const pass = !hostile || (status === 400 && pct(ms, 0.95) < TARGET_MS && bytes < TARGET_BYTES);
  ok &&= pass;
  console.log(`${name.padEnd(48)} ${status}  p50 ${pct(ms, 0.5).toFixed(1)} ms  p95 ${pct(ms, 0.95).toFixed(1)} ms  ${bytes.toLocaleString("en")} B${hostile ? (pass ? "  ok" : "  OVER TARGET") : ""}`);
}
console.log(`target for hostile input: 400 in under ${TARGET_MS} ms (p95), under ${TARGET_BYTES / 1024} kB`);
await db.$disconnect();
process.exit(ok ? 0 : 1);
