import { describe, expect, it } from "vitest";
import { diffPolicyDefinitions, formatCondition } from "./diff";
import type { PolicyDefinition } from "./model";
import { ciTriagePolicy } from "./shipped";

const copy = (): PolicyDefinition => structuredClone(ciTriagePolicy);

describe("formatCondition", () => {
  it("writes a nested tree on one line", () => {
    expect(
      formatCondition({
        all: [
          { property: "failing_stage", inList: ["lint", "test"] },
          { none: [{ property: "prior_reruns", below: 1 }] },
          { property: "known_flaky", isEmpty: true },
          { property: "reproduces_on_rerun", isNot: true },
        ],
      }),
    ).toBe("all(failing_stage in [lint, test], none(prior_reruns below 1), known_flaky is empty, reproduces_on_rerun is not true)");
  });
});

describe("diffPolicyDefinitions", () => {
  it("reports nothing for identical definitions", () => {
    const diff = diffPolicyDefinitions(ciTriagePolicy, copy());
    expect(diff).toEqual({
      rules: { added: [], removed: [], changed: [], reordered: false },
      properties: { added: [], removed: [], changed: [] },
      defaults: [],
      meta: [],
      changed: false,
    });
  });

  it("names added, removed and changed rules with each changed field before and after", () => {
    const after = copy();
    after.rules[0]!.when = { property: "failing_stage", inList: ["deploy", "test"] };
    after.rules[0]!.priority = 90;
    after.rules = after.rules.filter((r) => r.name !== "unclassified_failure_escalates");
    after.rules.push({
      name: "lint_fixes_forward",
      priority: 5,
      when: { property: "failing_stage", is: "lint" },
      then: { property: "disposition", value: "fix_forward" },
      explanation: "Lint is always fixed forward.",
    });
    const diff = diffPolicyDefinitions(ciTriagePolicy, after);
    expect(diff.changed).toBe(true);
    expect(diff.rules.added).toEqual([
      { name: "lint_fixes_forward", summary: "priority 5: when failing_stage is lint then disposition = fix_forward" },
    ]);
    expect(diff.rules.removed.map((r) => r.name)).toEqual(["unclassified_failure_escalates"]);
    expect(diff.rules.changed).toEqual([
      {
        name: "deploy_failure_rolls_back",
        changes: [
          { field: "priority", before: "100", after: "90" },
          { field: "when", before: "failing_stage is deploy", after: "failing_stage in [deploy, test]" },
        ],
      },
    ]);
    expect(diff.rules.reordered).toBe(false);
  });

  it("notices reordering, property and default changes", () => {
    const after = copy();
    after.rules.reverse();
    const prior = after.properties.find((p) => p.name === "prior_reruns");
    if (prior?.type === "integer") prior.max = 5;
    after.defaults[0]!.value = "roll_back";
    after.name = "Triage";
    const diff = diffPolicyDefinitions(ciTriagePolicy, after);
    expect(diff.rules.reordered).toBe(true);
    expect(diff.properties.changed).toEqual([
      expect.objectContaining({ name: "prior_reruns", before: expect.stringContaining("[0, ∞]"), after: expect.stringContaining("[0, 5]") }),
    ]);
    expect(diff.defaults).toEqual([{ property: "disposition", changes: [{ field: "value", before: "escalate_to_owner", after: "roll_back" }] }]);
    expect(diff.meta).toEqual([{ field: "name", before: "CI failure triage", after: "Triage" }]);
  });
});
