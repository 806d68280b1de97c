import { describe, expect, it } from "vitest";
import { matchBranch } from "@/server/domain/triggers/match-keys";
import { triggerRules } from "./triggers";

// Seeded rules meant for every branch must match branch names with "/" (picomatch's "*" stops
// at a slash, so "*" silently skipped renovate/..., feature/..., fix/... branches).
describe("seeded trigger rules", () => {
  it.each(["main", "renovate/node-22.x", "feature/ui/dates", "fix-1"])("the generic failed-check rule matches %s", (branch) => {
    const rule = triggerRules.find((r) => r.name === "failed-check-suggest-diagnosis")!;
    expect(matchBranch(rule.branchGlob ?? null, branch)).toBeNull();
  });

  it("no failed-check rule uses a bare '*' branch glob", () => {
    expect(triggerRules.filter((r) => r.kind === "failed_check" && r.branchGlob === "*").map((r) => r.name)).toEqual([]);
  });
});
