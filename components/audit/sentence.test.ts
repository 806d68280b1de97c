import { describe, expect, it } from "vitest";
import { auditDetail, auditVerb } from "./sentence";

describe("an audit entry as a sentence", () => {
  it("says what was done with a verb", () => {
    expect(auditVerb("approval.approve")).toBe("approved");
    expect(auditVerb("run.dispatch")).toBe("dispatched");
    expect(auditVerb("trigger_rule.disable")).toBe("disabled");
    expect(auditVerb("runner_pool.create")).toBe("created");
    expect(auditVerb("something.odd_thing")).toBe("did something odd thing on");
  });

  it("puts the reason first and what changed from what to what, in words", () => {
    expect(auditDetail({ reason: "known flake, tracked in #224" })).toBe("“known flake, tracked in #224”");
    expect(auditDetail({ botCommentsAllowed: { from: false, to: true }, writeBackExceptions: { from: [], to: ["comment"] } })).toBe(
      "bot comments allowed: false → true; write back exceptions: none → comment",
    );
    expect(auditDetail({ name: "claude-code-ci-diagnoser", version: 2, changes: ["added reviewer subagent"] })).toBe("name claude-code-ci-diagnoser; version 2; added reviewer subagent");
  });

  it("leaves out ids and digests, which the object's link already names", () => {
    const text = auditDetail({ runId: "cmabc123def456ghi789jkl0m", action: "push_commits", artifactDigest: `sha256:${"a".repeat(64)}`, from: "suggested" });
    expect(text).toBe("action push commits; from suggested");
    expect(auditDetail(null)).toBe("");
    expect(auditDetail({ note: "x".repeat(400) }).length).toBe(300);
  });
});
