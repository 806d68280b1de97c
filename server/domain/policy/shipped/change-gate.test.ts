import { describe, expect, it } from "vitest";
import { checkPolicy } from "../checks/check-policy";
import { evaluate } from "../evaluate";
import { factsFrom } from "../facts";
import { PolicyFactError } from "../fact-check";
import type { Scalar } from "../model";
import { assignments } from "../testing/enumerate";
import { changeGatePolicy } from "./change-gate";

function gate(values: Record<string, Scalar | undefined>) {
  return evaluate(changeGatePolicy, factsFrom("api", values));
}

const allowing = {
  approval_mode: "exceptions_allowed",
  repository_exempts_kind: true,
  is_diagnosis_comment: true,
  bot_comments_allowed: true,
  run_origin: "repository",
} as const;

describe("change gate", () => {
  it("requires approval when the write-back kind is not known", () => {
    const decision = gate({ ...allowing });
    expect(decision.value).toBe(true);
    expect(decision.rule).toBe("unknown_write_back_needs_approval");
  });

  it("refuses a kind outside the model rather than guessing", () => {
    expect(() => gate({ kind: "force_push", ...allowing })).toThrow(PolicyFactError);
    expect(() => gate({ kind: "force_push", ...allowing })).toThrow(
      expect.objectContaining({ constraint: "value_not_in_enum", property: "kind" }),
    );
  });

  it("requires approval with no facts at all (fail-closed)", () => {
    expect(evaluate(changeGatePolicy, {}).value).toBe(true);
  });

  it("never exempts approving reviews, releases or privileged capabilities", () => {
    for (const kind of ["approve_review", "privileged_capability"]) {
      const decision = gate({ kind, ...allowing });
      expect(decision.value).toBe(true);
      expect(decision.rule).toBe("sensitive_write_back_needs_approval");
    }
    expect(gate({ kind: "publish_release", ...allowing }).rule).toBe("release_publish_needs_a_person");
  });

  it("lets an exempted push through only when the stack allows exceptions", () => {
    expect(gate({ kind: "push_commits", ...allowing }).value).toBe(false);
    expect(gate({ kind: "push_commits", ...allowing, approval_mode: "always" }).value).toBe(true);
    expect(gate({ kind: "push_commits", ...allowing, approval_mode: undefined }).rule).toBe("stack_requires_approval");
    expect(gate({ kind: "push_commits", ...allowing, repository_exempts_kind: false }).value).toBe(true);
    expect(gate({ kind: "push_commits", ...allowing, repository_exempts_kind: undefined }).rule).toBe(
      "unexempted_write_back_needs_approval",
    );
  });

  it("holds a label flip for approval unless the repository exempts set_labels and the stack allows exceptions", () => {
    expect(gate({ kind: "set_labels", ...allowing }).rule).toBe("exempted_write_back_proceeds");
    expect(gate({ kind: "set_labels", ...allowing }).value).toBe(false);
    expect(gate({ kind: "set_labels", ...allowing, repository_exempts_kind: false }).rule).toBe("unexempted_write_back_needs_approval");
    expect(gate({ kind: "set_labels", ...allowing, approval_mode: "always" }).rule).toBe("stack_requires_approval");
    // A label flip is not a comment: the bot-comment allowance never covers it.
    expect(gate({ kind: "set_labels", ...allowing, repository_exempts_kind: undefined }).value).toBe(true);
  });

  it("posts a diagnosis comment without approval when bot comments are allowed", () => {
    const base = { kind: "comment", approval_mode: "exceptions_allowed", is_diagnosis_comment: true, run_origin: "repository" };
    expect(gate({ ...base, bot_comments_allowed: true }).rule).toBe("diagnosis_comment_allowed");
    expect(gate({ ...base, bot_comments_allowed: true }).value).toBe(false);
    expect(gate({ ...base, bot_comments_allowed: false }).value).toBe(true);
    expect(gate({ ...base, is_diagnosis_comment: false, bot_comments_allowed: true }).value).toBe(true);
  });

  it("requires approval everywhere the stack has not allowed exceptions (exhaustive)", () => {
    let seen = 0;
    for (const assignment of assignments(changeGatePolicy)) {
      if (assignment.approval_mode === "exceptions_allowed") continue;
      seen++;
      expect(gate(assignment).value, JSON.stringify(assignment)).toBe(true);
    }
    expect(seen).toBeGreaterThan(100);
  });

  it("waives approval only for exemptable kinds with every enabling fact asserted (exhaustive)", () => {
    for (const assignment of assignments(changeGatePolicy)) {
      if (gate(assignment).value !== false) continue;
      expect(["push_commits", "update_pr_branch", "open_pr", "comment", "review", "rerun_workflow", "set_labels"]).toContain(
        assignment.kind,
      );
      expect(assignment.approval_mode).toBe("exceptions_allowed");
      const diagnosis = assignment.kind === "comment" && assignment.is_diagnosis_comment === true && assignment.bot_comments_allowed === true;
      expect(diagnosis || assignment.repository_exempts_kind === true).toBe(true);
      if (assignment.kind !== "set_labels") expect(assignment.run_origin).toBe("repository");
    }
  });

  it("never lets a fork's (or an unplaced) run push, open a PR, comment, review or rerun without a person, whatever the repository allows", () => {
    for (const run_origin of ["fork", "unknown", undefined]) {
      for (const kind of ["push_commits", "update_pr_branch", "open_pr", "comment", "review", "rerun_workflow"]) {
        const decision = gate({ kind, ...allowing, run_origin });
        expect(decision.value, `${kind} ${run_origin}`).toBe(true);
        expect(decision.rule).toBe("untrusted_origin_needs_approval");
        // The same write-back from the repository's own code is exempted.
        expect(gate({ kind, ...allowing, run_origin: "repository" }).value, `${kind} repository`).toBe(false);
      }
      // A label flip carries no code or words of the run: an exempted one still proceeds.
      expect(gate({ kind: "set_labels", ...allowing, run_origin }).value).toBe(false);
    }
  });

  it("never publishes a release without a person, for any facts (exhaustive), and says so by its own rule", () => {
    let seen = 0;
    for (const assignment of assignments(changeGatePolicy)) {
      if (assignment.kind !== "publish_release") continue;
      seen++;
      const decision = gate(assignment);
      expect(decision.value, JSON.stringify(assignment)).toBe(true);
      expect(decision.rule, JSON.stringify(assignment)).toBe("release_publish_needs_a_person");
    }
    expect(seen).toBeGreaterThan(50);
  });

  it("never rolls back a deploy without a person, for any facts (exhaustive)", () => {
    let seen = 0;
    for (const assignment of assignments(changeGatePolicy)) {
      if (assignment.kind !== "roll_back") continue;
      seen++;
      expect(gate(assignment).rule, JSON.stringify(assignment)).toBe("roll_back_needs_a_person");
    }
    expect(seen).toBeGreaterThan(50);
  });

  it("never exempts an approving review, for any facts (exhaustive)", () => {
    let seen = 0;
    for (const assignment of assignments(changeGatePolicy)) {
      if (assignment.kind !== "approve_review") continue;
      seen++;
      expect(gate(assignment).value, JSON.stringify(assignment)).toBe(true);
    }
    expect(seen).toBeGreaterThan(50);
  });

  it("passes its own checks: no conflicts, no gaps, no vacuous rules", () => {
    expect(checkPolicy(changeGatePolicy)).toEqual({ conflicts: [], gaps: [], vacuous: [] });
  });
});
