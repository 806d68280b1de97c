// Fails when a domain area (`server/domain/<area>`) sits in a cycle of areas, printing the cycle
// and the file edges that make it (`npm run lint:deps`, part of `npm run lint`). `--report`
// prints the graph's strongly connected components and mutual pairs, and exits 0.
// Logic and its tests: scripts/lib/area-graph.mjs, area-graph.test.ts.
import { cruise } from "dependency-cruiser";
import extractDepcruiseOptions from "dependency-cruiser/config-utl/extract-depcruise-options";
import extractTSConfig from "dependency-cruiser/config-utl/extract-ts-config";
import { areaEdges, cyclesOf, mutualPairs, shortestCycle } from "./lib/area-graph.mjs";

const report = process.argv.includes("--report");
const options = await extractDepcruiseOptions("./.dependency-cruiser.cjs");
// Only the graph is wanted here; the rules are checked by depcruise itself.
options.validate = false;
const result = await cruise(["server/domain"], options, {}, { tsConfig: extractTSConfig("tsconfig.json") });
const edges = areaEdges(result.output.modules);
const cycles = cyclesOf(edges);
const pairs = mutualPairs(edges);

if (report) {
  const areas = new Set([...edges.keys(), ...[...edges.values()].flatMap((t) => [...t.keys()])]);
  console.log(`${areas.size} areas, ${[...edges.values()].reduce((n, t) => n + t.size, 0)} area edges`);
  console.log(`strongly connected components: ${cycles.length}`);
  for (const c of cycles) console.log(`  (${c.length}) ${c.join(", ")}`);
  console.log(`mutual pairs: ${pairs.length}`);
  for (const p of pairs) console.log(`  ${p}`);
  process.exit(0);
}

if (cycles.length === 0) process.exit(0);
console.error("Domain areas in a cycle (server/domain/<area>; move the shared part down or the use case up):");
for (const component of cycles) {
  // The shortest cycle through any of its areas: a new upward import usually closes a short one.
  const cycle = component
    .map((start) => shortestCycle(edges, [start, ...component.filter((a) => a !== start)]))
    .reduce((best, c) => (c.length < best.length ? c : best));
  console.error(`\n  ${component.length} areas: ${component.join(", ")}`);
  console.error(`  a cycle: ${cycle.join(" → ")}`);
  for (let i = 0; i + 1 < cycle.length; i += 1) {
    console.error(`    ${cycle[i]} → ${cycle[i + 1]}:`);
    for (const edge of edges.get(cycle[i]).get(cycle[i + 1])) console.error(`      ${edge}`);
  }
}
if (pairs.length > 0) console.error(`\n  areas importing each other: ${pairs.join(", ")}`);
process.exit(1);
