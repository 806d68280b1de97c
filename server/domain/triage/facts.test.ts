import { describe, expect, it } from "vitest";
import { ciTriagePolicy } from "@/server/domain/policy/shipped/ci-triage";
import { evaluate } from "@/server/domain/policy/evaluate";
import { classifyStage, deriveTriageFacts, type TriageHistory } from "./facts";

const names = (jobName: string | null, step: string | null = null, checkName: string | null = null, workflowName: string | null = null) => ({ jobName, step, checkName, workflowName });

const base: TriageHistory = {
  origin: "github",
  names: names("unit-tests", "Run vitest", "CI / unit-tests", "CI"),
  failingTests: [],
  signature: "0123456789abcdef",
  runAttempt: 1,
  earlierFailedAttempts: [],
  flakyEvidence: [],
};

describe("classifyStage", () => {
  it.each([
    [names("eslint"), "lint"],
    [names("lint-and-format"), "lint"],
    [names("unit_tests"), "test"],
    [names("e2e (chromium)"), "test"],
    [names("build"), "build"],
    [names("typecheck", "Run tsc --noEmit"), "build"],
    [names("deploy-production", "Run tests after deploy"), "deploy"],
    [names("job-3", "npm test"), "test"],
    [names(null, null, null, "Release"), "deploy"],
  ] as const)("%j is %s", (n, stage) => {
    expect(classifyStage(n, [])).toBe(stage);
  });

  it("uses the job name before the workflow's", () => {
    expect(classifyStage(names("lint", null, null, "Deploy"), [])).toBe("lint");
  });

  it("falls back to parsed failing tests, and names nothing when nothing says", () => {
    expect(classifyStage(names("matrix-7", "Step 3"), ["adds numbers"])).toBe("test");
    expect(classifyStage(names("matrix-7", "Step 3"), [])).toBeNull();
  });
});

describe("deriveTriageFacts", () => {
  it("a first failure with no flaky history: a deterministic failure that fixes forward", () => {
    const { facts } = deriveTriageFacts(base);
    expect(facts).toEqual({
      failing_stage: { value: "test", source: "webhook" },
      known_flaky: { value: false, source: "system" },
      prior_reruns: { value: 0, source: "system" },
    });
    expect(evaluate(ciTriagePolicy, facts).value).toBe("fix_forward");
  });

  it("names local CI's stage by its check command, not by the job Airlock always calls test", () => {
    const local = (step: string) => deriveTriageFacts({ ...base, origin: "local", names: names("test", step, "local-ci / test", "local-ci") }).facts.failing_stage;
    expect(local("sh deploy.sh")).toEqual({ value: "deploy", source: "system" });
    expect(local("npm run lint")).toEqual({ value: "lint", source: "system" });
    expect(local("npm test")).toEqual({ value: "test", source: "system" });
    // A GitHub job called "test" is the repository's own name, and still says the stage.
    expect(deriveTriageFacts({ ...base, names: names("test", "sh deploy.sh") }).facts.failing_stage).toEqual({ value: "test", source: "webhook" });
  });

  it("marks local CI's stage as the system's, not a webhook's", () => {
    expect(deriveTriageFacts({ ...base, origin: "local" }).facts.failing_stage).toEqual({ value: "test", source: "system" });
  });

  it("flaky evidence (failed and passed at one commit) earns one rerun", () => {
    const { facts, notes } = deriveTriageFacts({ ...base, flakyEvidence: [{ headSha: "a".repeat(40) }] });
    expect(facts.known_flaky).toEqual({ value: true, source: "system" });
    expect(notes.join("\n")).toContain("aaaaaaaaaaaa");
    expect(evaluate(ciTriagePolicy, facts).value).toBe("rerun_once");
  });

  it("an earlier failed attempt with the same signature is a reproduction after one rerun", () => {
    const { facts } = deriveTriageFacts({ ...base, flakyEvidence: [{ headSha: "a".repeat(40) }], earlierFailedAttempts: [{ signature: base.signature }] });
    expect(facts).toMatchObject({ prior_reruns: { value: 1 }, reproduces_on_rerun: { value: true } });
    expect(evaluate(ciTriagePolicy, facts)).toMatchObject({ value: "escalate_to_owner", rule: "flaky_failure_reproduced_escalates" });
  });

  it("an earlier attempt that failed differently does not reproduce", () => {
    const { facts } = deriveTriageFacts({ ...base, earlierFailedAttempts: [{ signature: "ffffffffffffffff" }] });
    expect(facts.reproduces_on_rerun).toEqual({ value: false, source: "system" });
  });

  it("counts GitHub's run attempt as prior reruns, and a failed rerun without a stored log as reproduced", () => {
    const { facts } = deriveTriageFacts({ ...base, runAttempt: 3 });
    expect(facts).toMatchObject({ prior_reruns: { value: 2 }, reproduces_on_rerun: { value: true } });
  });

  it("leaves known_flaky and reproduces_on_rerun absent without a signature (closed world, then escalation)", () => {
    const { facts } = deriveTriageFacts({ ...base, signature: null, runAttempt: 2 });
    expect(facts).not.toHaveProperty("known_flaky");
    expect(facts).not.toHaveProperty("reproduces_on_rerun");
    expect(evaluate(ciTriagePolicy, facts)).toMatchObject({ value: "escalate_to_owner", rule: "unclassified_failure_escalates" });
  });

  it("names no stage it cannot read, so the policy refuses the facts", () => {
    const { facts, stage } = deriveTriageFacts({ ...base, names: names("matrix-7", "Step 3") });
    expect(stage).toBeNull();
    expect(() => evaluate(ciTriagePolicy, facts)).toThrow(/failing_stage is required/);
  });
});
