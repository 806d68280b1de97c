// The graph of domain areas (`server/domain/<area>`): an edge A → B when a production file in A
// imports one in B, directly or through files outside the domain (a forge adapter that imports
// the domain ties its callers to it as surely as a direct import). Type-only imports count, as
// they do for dependency-cruiser's no-circular: a cycle of types is still a knot.
// `scripts/area-cycles.mjs` runs it in `npm run lint`; area-graph.test.ts holds the logic.

/** Tests and their fixtures drive the whole stack on purpose; the same pattern as .dependency-cruiser.cjs. */
export const TESTS = /(\.test\.tsx?$|\/fixtures\/|\/testing\/|test-fixtures\.ts$)/;

/** The area a file belongs to: the folder under server/domain, or the file itself for one at its top. */
export function areaOf(file) {
  const match = /^server\/domain\/([^/]+)(\/)?/.exec(file);
  if (!match) return null;
  return match[2] ? match[1] : match[1].replace(/\.tsx?$/, ".ts");
}

/**
 * modules: dependency-cruiser's `modules` ({ source, dependencies: [{ resolved }] }).
 * Returns Map<from area, Map<to area, string[] file edges "a.ts → b.ts" (via c.ts)>>.
 */
export function areaEdges(modules) {
  const production = new Map();
  for (const m of modules) {
    if (TESTS.test(m.source) || m.coreModule || m.couldNotResolve) continue;
    production.set(m.source, m.dependencies.map((d) => d.resolved).filter((r) => !TESTS.test(r)));
  }
  const edges = new Map();
  const add = (from, to, label) => {
    if (!edges.has(from)) edges.set(from, new Map());
    const targets = edges.get(from);
    if (!targets.has(to)) targets.set(to, []);
    targets.get(to).push(label);
  };
  for (const [source, dependencies] of production) {
    const from = areaOf(source);
    if (!from) continue;
    // Walk through files outside the domain until a domain file is reached.
    const seen = new Set();
    const queue = dependencies.map((d) => [d, []]);
    while (queue.length > 0) {
      const [file, via] = queue.shift();
      if (seen.has(file)) continue;
      seen.add(file);
      const to = areaOf(file);
      if (to) {
        if (to !== from) add(from, to, `${source} → ${file}${via.length ? ` (via ${via.join(" → ")})` : ""}`);
        continue;
      }
      if (!file.startsWith("server/")) continue; // packages and generated code import no domain code
      for (const next of production.get(file) ?? []) queue.push([next, [...via, file]]);
    }
  }
  return edges;
}

/** Tarjan's strongly connected components with more than one area, each sorted, largest first. */
export function cyclesOf(edges) {
  const nodes = new Set(edges.keys());
  for (const targets of edges.values()) for (const to of targets.keys()) nodes.add(to);
  let index = 0;
  const indices = new Map();
  const low = new Map();
  const stack = [];
  const onStack = new Set();
  const components = [];
  const visit = (node) => {
    indices.set(node, index);
    low.set(node, index);
    index += 1;
    stack.push(node);
    onStack.add(node);
    for (const next of edges.get(node)?.keys() ?? []) {
      if (!indices.has(next)) {
        visit(next);
        low.set(node, Math.min(low.get(node), low.get(next)));
      } else if (onStack.has(next)) {
        low.set(node, Math.min(low.get(node), indices.get(next)));
      }
    }
    if (low.get(node) === indices.get(node)) {
      const component = [];
      let member;
      do {
        member = stack.pop();
        onStack.delete(member);
        component.push(member);
      } while (member !== node);
      if (component.length > 1) components.push(component.sort());
    }
  };
  for (const node of [...nodes].sort()) if (!indices.has(node)) visit(node);
  return components.sort((a, b) => b.length - a.length || a[0].localeCompare(b[0]));
}

/** Pairs of areas that import each other, "a ↔ b" with a < b. */
export function mutualPairs(edges) {
  const pairs = [];
  for (const [from, targets] of edges) {
    for (const to of targets.keys()) if (from < to && edges.get(to)?.has(from)) pairs.push(`${from} ↔ ${to}`);
  }
  return pairs.sort();
}

/** One shortest cycle through the component's first area, as a list of areas ending where it starts. */
export function shortestCycle(edges, component) {
  const members = new Set(component);
  const start = component[0];
  const previous = new Map([[start, null]]);
  const queue = [start];
  while (queue.length > 0) {
    const node = queue.shift();
    for (const next of edges.get(node)?.keys() ?? []) {
      if (!members.has(next)) continue;
      if (next === start) {
        const path = [];
        for (let at = node; at !== start; at = previous.get(at)) path.unshift(at);
        return [start, ...path, start];
      }
      if (!previous.has(next)) {
        previous.set(next, node);
        queue.push(next);
      }
    }
  }
  return [start];
}
