import { describe, expect, it } from "vitest";
import { filterStacks } from "./filters";

const stack = (name: string, archived = false, model = "claude-sonnet-4-5") => ({ name, description: `${name} stack`, model, archivedAt: archived ? new Date(0) : null });
const stacks = [stack("ci-diagnoser"), stack("old-fixer", true), stack("release-reviewer", false, "gpt-5")];

describe("filterStacks", () => {
  it("keeps every stack without filters", () => {
    expect(filterStacks(stacks, { q: null, show: null })).toHaveLength(3);
  });

  it("matches the text in the name, description or model, in any case", () => {
    expect(filterStacks(stacks, { q: "DIAGNOSER", show: null }).map((s) => s.name)).toEqual(["ci-diagnoser"]);
    expect(filterStacks(stacks, { q: "gpt", show: null }).map((s) => s.name)).toEqual(["release-reviewer"]);
  });

  it("shows active or archived stacks only", () => {
    expect(filterStacks(stacks, { q: null, show: "archived" }).map((s) => s.name)).toEqual(["old-fixer"]);
    expect(filterStacks(stacks, { q: null, show: "active" }).map((s) => s.name)).toEqual(["ci-diagnoser", "release-reviewer"]);
  });
});
