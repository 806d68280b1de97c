import { describe, expect, it } from "vitest";
import { AppError } from "@/server/errors";
import { checkPolicy } from "../checks/check-policy";
import { evaluate, evaluateAll } from "../evaluate";
import { factsFrom } from "../facts";
import type { Scalar } from "../model";
import { assignments } from "../testing/enumerate";
import { runnerSelectionPolicy } from "./runner-selection";

function select(values: Record<string, Scalar | undefined>) {
  const decisions = evaluateAll(runnerSelectionPolicy, factsFrom("webhook", values));
  return { tier: decisions.pool_trust_tier!, privileged: decisions.privileged_credentials! };
}

describe("runner selection", () => {
  it("always puts a fork's pull request on an untrusted pool without privilege (exhaustive)", () => {
    let forks = 0;
    for (const assignment of assignments(runnerSelectionPolicy)) {
      if (assignment.is_fork !== true) continue;
      forks++;
      const { tier, privileged } = select(assignment);
      expect(tier.value).toBe("untrusted");
      expect(tier.rule).toBe("fork_runs_untrusted");
      expect(privileged.value).toBe(false);
    }
    expect(forks).toBeGreaterThan(0);
  });

  it("treats an untrusted or unknown ref as untrusted", () => {
    expect(select({ is_fork: false, ref_trusted: false, task_kind: "repair" }).tier.value).toBe("untrusted");
    expect(select({ is_fork: false, task_kind: "repair" }).tier.rule).toBe("untrusted_ref_runs_untrusted");
    expect(select({ ref_trusted: true, task_kind: "repair" }).tier.value).toBe("untrusted");
  });

  it("runs the repository's own trusted ref on a trusted pool", () => {
    const { tier } = select({ is_fork: false, ref_trusted: true, task_kind: "diagnose" });
    expect(tier.value).toBe("trusted");
    expect(tier.rule).toBe("trusted_ref_runs_trusted");
  });

  it("grants privileged credentials only to trusted repair or release review that asks", () => {
    const trusted = { is_fork: false, ref_trusted: true };
    expect(select({ ...trusted, task_kind: "repair", stack_requests_privileged: true }).privileged.value).toBe(true);
    expect(select({ ...trusted, task_kind: "release_review", stack_requests_privileged: true }).privileged.value).toBe(true);
    expect(select({ ...trusted, task_kind: "repair" }).privileged.rule).toBe("privilege_not_requested");
    expect(select({ ...trusted, task_kind: "diagnose", stack_requests_privileged: true }).privileged.value).toBe(false);
    expect(select({ ...trusted, stack_requests_privileged: true }).privileged.rule).toBe("read_only_task_gets_no_privilege");
  });

  it("never grants privilege on an untrusted pool (exhaustive)", () => {
    for (const assignment of assignments(runnerSelectionPolicy)) {
      const { tier, privileged } = select(assignment);
      if (privileged.value === true) expect(tier.value, JSON.stringify(assignment)).toBe("trusted");
    }
  });

  it("asks which property to decide, since it decides two", () => {
    expect(() => evaluate(runnerSelectionPolicy, {})).toThrow(AppError);
    expect(() => evaluate(runnerSelectionPolicy, {})).toThrow(/decides pool_trust_tier, privileged_credentials/);
    expect(evaluate(runnerSelectionPolicy, {}, { property: "pool_trust_tier" }).value).toBe("untrusted");
  });

  it("passes its own checks for both decided properties", () => {
    expect(checkPolicy(runnerSelectionPolicy)).toEqual({ conflicts: [], gaps: [], vacuous: [] });
  });
});
