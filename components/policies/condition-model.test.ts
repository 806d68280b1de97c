import { describe, expect, it } from "vitest";
import type { PropertyDefinition } from "@/server/domain/policy/schemas";
import { leafOf, makeLeaf, newLeaf, operatorsFor, retarget } from "./condition-model";

const stage: PropertyDefinition = { name: "stage", type: "enum", values: ["lint", "test"], cardinality: "1", rulesOnly: false };
const flaky: PropertyDefinition = { name: "flaky", type: "boolean", cardinality: "0..1", rulesOnly: false };
const reruns: PropertyDefinition = { name: "reruns", type: "integer", min: 0, cardinality: "0..1", rulesOnly: false };
const verdict: PropertyDefinition = { name: "verdict", type: "enum", values: ["a"], cardinality: "0..1", rulesOnly: true };

describe("condition model", () => {
  it("offers only the operators a property's type supports", () => {
    expect(operatorsFor(flaky)).toEqual(["is", "isNot", "isEmpty"]);
    expect(operatorsFor(stage)).not.toContain("below");
    expect(operatorsFor(reruns)).toContain("above");
  });

  it("round-trips stored leaves through the editor's view", () => {
    for (const leaf of [
      { property: "stage", is: "lint" },
      { property: "stage", inList: ["lint", "test"] },
      { property: "reruns", below: 2 },
      { property: "flaky", isEmpty: false },
    ]) {
      const view = leafOf(leaf);
      expect(view).not.toBeNull();
      const property = [stage, flaky, reruns].find((p) => p.name === view!.property)!;
      expect(makeLeaf(property, view!.op, view!.value)).toEqual(leaf);
    }
  });

  it("keeps a leaf well-typed when its property or operator changes", () => {
    expect(retarget({ property: "stage", op: "is", value: "lint" }, flaky)).toEqual({ property: "flaky", is: true });
    expect(retarget({ property: "reruns", op: "below", value: 2 }, stage)).toEqual({ property: "stage", is: "lint" });
    expect(makeLeaf(stage, "inList", "test")).toEqual({ property: "stage", inList: ["test"] });
    expect(makeLeaf(stage, "is", ["test", "lint"])).toEqual({ property: "stage", is: "test" });
    expect(makeLeaf(reruns, "above", "x")).toEqual({ property: "reruns", above: 0 });
  });

  it("never starts a new condition on a rules-only property", () => {
    expect(newLeaf([verdict, flaky])).toEqual({ property: "flaky", is: true });
    expect(newLeaf([verdict])).toBeNull();
  });
});
