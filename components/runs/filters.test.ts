import { describe, expect, it } from "vitest";
import { parseRunFilters, runFiltersToSearch } from "./filters";

describe("run list filters in the URL", () => {
  it("round-trips every filter", () => {
    const f = { repositoryId: "r1", status: "failed", taskKind: "repair", source: "pr_comment", stackId: "s1", actor: "octocat", q: "flaky test" } as const;
    expect(parseRunFilters(Object.fromEntries(new URLSearchParams(runFiltersToSearch(f))))).toEqual(f);
  });

  it("ignores unknown enum values and blank text", () => {
    expect(parseRunFilters({ status: "bogus", source: "nope", q: "   ", actor: ["a", "b"] })).toEqual({
      status: undefined,
      taskKind: undefined,
      source: undefined,
      repositoryId: undefined,
      stackId: undefined,
      actor: "a",
      q: undefined,
    });
  });
});
