import { describe, expect, it } from "vitest";
import { TRIGGER_KINDS } from "@/server/domain/ci-events/enums";
import { rule } from "./fixtures";
import { ALLOWED_TASK_KINDS, TRIGGER_DEFAULTS, validateTriggerRule, zTriggerRule } from "./trigger-rule";

describe("validateTriggerRule", () => {
  it("accepts the defaults of every kind", () => {
    for (const kind of TRIGGER_KINDS) {
      expect(validateTriggerRule(rule({ kind, ...TRIGGER_DEFAULTS[kind] })), kind).toEqual([]);
    }
  });

  it("follows the spec's defaults", () => {
    expect(TRIGGER_DEFAULTS.failed_check).toEqual({ taskKind: "diagnose", action: "suggest" });
    expect(TRIGGER_DEFAULTS.pr_comment.action).toBe("auto_run");
    expect(TRIGGER_DEFAULTS.label.action).toBe("auto_run");
    expect(TRIGGER_DEFAULTS.release.taskKind).toBe("release_review");
    expect(TRIGGER_DEFAULTS.flaky_scan.taskKind).toBe("triage");
    for (const kind of TRIGGER_KINDS) expect(ALLOWED_TASK_KINDS[kind]).toContain(TRIGGER_DEFAULTS[kind].taskKind);
  });

  it.each([
    [rule({ kind: "pr_comment", job: "test" }), ["pr_comment rules cannot match on job"]],
    [rule({ kind: "label", failureSignature: "abc", step: "x" }), ["label rules cannot match on step", "label rules cannot match on failureSignature"]],
    [rule({ kind: "release", taskKind: "diagnose" }), ["release rules start release_review, not diagnose"]],
    [rule({ kind: "flaky_scan", taskKind: "diagnose" }), ["flaky_scan rules start triage or repair, not diagnose"]],
    [rule({ kind: "failed_check", workflow: " " }), ['workflow is empty: use null for "any"']],
    [rule({ kind: "failed_check", pathFilters: ["src/**", ""] }), ["pathFilters has an empty pattern"]],
  ])("reports %#", (r, problems) => {
    expect(validateTriggerRule(r)).toEqual(problems);
  });

  it("accepts a Prisma row as it is", () => {
    const row = {
      ...rule({ kind: "failed_check" }),
      version: 2,
      createdAt: new Date(),
      updatedAt: new Date(),
    };
    expect(zTriggerRule.parse(row)).toMatchObject({ id: "rule_failed_check", version: 2 });
  });
});
