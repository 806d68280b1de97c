import { describe, expect, it } from "vitest";
import { areaEdges, areaOf, cyclesOf, mutualPairs, shortestCycle } from "./area-graph.mjs";

// The check `npm run lint:deps` runs (scripts/area-cycles.mjs) on a made-up module graph in
// dependency-cruiser's shape: what makes an area edge, and that a cycle is found and named.

const mod = (source: string, ...resolved: string[]) => ({ source, dependencies: resolved.map((r) => ({ resolved: r })) });

describe("the area graph", () => {
  it("names the area of a domain file, and none outside the domain", () => {
    expect(areaOf("server/domain/runs/lifecycle.ts")).toBe("runs");
    expect(areaOf("server/domain/runs/sub/x.ts")).toBe("runs");
    expect(areaOf("server/domain/audit.ts")).toBe("audit.ts");
    expect(areaOf("server/forges/local/ci.ts")).toBeNull();
  });

  it("finds a cycle between two areas, with the file edges that make it", () => {
    const edges = areaEdges([
      mod("server/domain/runs/cancel.ts", "server/domain/approvals/transition.ts"),
      mod("server/domain/approvals/settle.ts", "server/domain/runs/lifecycle.ts"),
      mod("server/domain/approvals/transition.ts"),
      mod("server/domain/runs/lifecycle.ts"),
    ]);
    const cycles = cyclesOf(edges);
    expect(cycles).toEqual([["approvals", "runs"]]);
    expect(mutualPairs(edges)).toEqual(["approvals ↔ runs"]);
    expect(shortestCycle(edges, cycles[0])).toEqual(["approvals", "runs", "approvals"]);
    expect(edges.get("runs")?.get("approvals")).toEqual(["server/domain/runs/cancel.ts → server/domain/approvals/transition.ts"]);
  });

  it("follows imports through files outside the domain, and finds a longer cycle", () => {
    const edges = areaEdges([
      mod("server/domain/a/x.ts", "server/forges/local/ci.ts"),
      mod("server/forges/local/ci.ts", "server/domain/b/y.ts"),
      mod("server/domain/b/y.ts", "server/domain/c/z.ts"),
      mod("server/domain/c/z.ts", "server/domain/a/w.ts"),
      mod("server/domain/a/w.ts"),
    ]);
    expect(edges.get("a")?.get("b")).toEqual(["server/domain/a/x.ts → server/domain/b/y.ts (via server/forges/local/ci.ts)"]);
    expect(cyclesOf(edges)).toEqual([["a", "b", "c"]]);
    expect(mutualPairs(edges)).toEqual([]);
    expect(shortestCycle(edges, ["a", "b", "c"])).toEqual(["a", "b", "c", "a"]);
  });

  it("leaves tests and fixtures out: they drive the whole stack on purpose", () => {
    const edges = areaEdges([
      mod("server/domain/runs/cancel.ts", "server/domain/approvals/transition.ts"),
      mod("server/domain/approvals/transition.ts"),
      mod("server/domain/approvals/decide.int.test.ts", "server/domain/runs/cancel.ts"),
      mod("server/domain/approvals/test-fixtures.ts", "server/domain/runs/cancel.ts"),
      mod("server/domain/approvals/x.ts", "server/testing/factories.ts"),
      mod("server/testing/factories.ts", "server/domain/runs/cancel.ts"),
    ]);
    expect(cyclesOf(edges)).toEqual([]);
  });

  it("a layered graph has no cycle", () => {
    const edges = areaEdges([
      mod("server/domain/use-cases/a.ts", "server/domain/runs/b.ts", "server/domain/events/c.ts"),
      mod("server/domain/runs/b.ts", "server/domain/events/c.ts", "server/domain/audit.ts"),
      mod("server/domain/events/c.ts"),
      mod("server/domain/audit.ts", "server/domain/events/c.ts"),
    ]);
    expect(cyclesOf(edges)).toEqual([]);
    expect(mutualPairs(edges)).toEqual([]);
  });
});
