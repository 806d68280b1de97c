import { describe, expect, it } from "vitest";
import { EVERY_REPOSITORY, filterRules } from "./filters";

const rule = (name: string, kind: "failed_check" | "release", repository: string | null, stack = "ci-diagnoser") => ({
  name,
  kind,
  repository: repository ? { id: repository } : null,
  stack: { name: stack },
});
const rules = [rule("red-check", "failed_check", "r1"), rule("release-notes", "release", null, "release-reviewer"), rule("red-check-2", "failed_check", "r2")];
const none = { q: null, kind: null, repositoryId: null };

describe("filterRules", () => {
  it("narrows by kind and by repository, with rules for every repository on their own", () => {
    expect(filterRules(rules, { ...none, kind: "release" }).map((r) => r.name)).toEqual(["release-notes"]);
    expect(filterRules(rules, { ...none, repositoryId: "r2" }).map((r) => r.name)).toEqual(["red-check-2"]);
    expect(filterRules(rules, { ...none, repositoryId: EVERY_REPOSITORY }).map((r) => r.name)).toEqual(["release-notes"]);
  });

  it("matches the text in the rule's or its stack's name", () => {
    expect(filterRules(rules, { ...none, q: "REVIEWER" }).map((r) => r.name)).toEqual(["release-notes"]);
    expect(filterRules(rules, { ...none, q: "check-2" }).map((r) => r.name)).toEqual(["red-check-2"]);
  });
});
