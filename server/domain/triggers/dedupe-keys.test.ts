import { describe, expect, it } from "vitest";
import {
  checkRerunDedupeKey,
  dispatchDedupeKey,
  dispatchSubjectKey,
  failedCheckDedupeKey,
  failedCheckSubjectKey,
  flakyScanDedupeKey,
  releaseDedupeKey,
  type FailedCheckKeyInput,
} from "./dedupe-keys";

const base: FailedCheckKeyInput = {
  repository: "acme/web",
  pullRequestNumber: 12,
  checkSource: "CI",
  commitSha: "aa00bb11cc22dd33ee44ff5566778899aabbccdd",
  job: "test (ubuntu-latest, 20)",
  step: "Run npm test",
  failureSignature: "077fcdd2482487b2",
  contextDigest: "5d41402abc4b2a76",
  ruleId: "rule_1",
};

describe("failedCheckDedupeKey", () => {
  it("has a readable prefix and a hash", () => {
    expect(failedCheckDedupeKey(base)).toMatch(
      /^failed-check:acme\/web:pr-12:aa00bb11cc22:test-ubuntu-latest-20:Run-npm-test:077fcdd2482487b2:5d41402abc4b:rule_1:[0-9a-f]{32}$/,
    );
  });

  it("is deterministic", () => {
    expect(failedCheckDedupeKey({ ...base })).toBe(failedCheckDedupeKey(base));
  });

  it.each([
    ["repository", { repository: "acme/api" }],
    ["pull request", { pullRequestNumber: 13 }],
    ["commit", { commitSha: "bb00bb11cc22dd33ee44ff5566778899aabbccdd" }],
    ["job", { job: "lint" }],
    ["step", { step: "Run npm ci" }],
    ["missing step", { step: null }],
    ["signature", { failureSignature: "1111111111111111" }],
    ["context digest", { contextDigest: "0000000000000000" }],
    ["rule", { ruleId: "rule_2" }],
    ["source outside a PR", { pullRequestNumber: null }],
  ] as const)("changes with the %s", (_name, patch) => {
    expect(failedCheckDedupeKey({ ...base, ...patch })).not.toBe(failedCheckDedupeKey(base));
  });

  it("uses the check source only outside a pull request", () => {
    const pr = failedCheckDedupeKey(base);
    expect(failedCheckDedupeKey({ ...base, checkSource: "Other" })).toBe(pr);
    const push = failedCheckDedupeKey({ ...base, pullRequestNumber: null });
    expect(push).toMatch(/^failed-check:acme\/web:check-CI:/);
    expect(failedCheckDedupeKey({ ...base, pullRequestNumber: null, checkSource: "Other" })).not.toBe(push);
  });

  it("tells apart values whose readable forms collide", () => {
    const a = failedCheckDedupeKey({ ...base, job: "a b" });
    const b = failedCheckDedupeKey({ ...base, job: "a-b" });
    expect(a.split(":").slice(0, -1)).toEqual(b.split(":").slice(0, -1));
    expect(a).not.toBe(b);
    const long = "x".repeat(60);
    expect(failedCheckDedupeKey({ ...base, job: `${long}1` })).not.toBe(failedCheckDedupeKey({ ...base, job: `${long}2` }));
    expect(failedCheckDedupeKey({ ...base, step: null })).not.toBe(failedCheckDedupeKey({ ...base, step: "-" }));
  });

  it("has a subject key without the rule: two rules on one failure share it, another failure does not", () => {
    const { ruleId: _rule, ...subject } = base;
    expect(failedCheckSubjectKey(subject)).toMatch(/^failed-check-subject:acme\/web:pr-12:aa00bb11cc22:test-ubuntu-latest-20:Run-npm-test:077fcdd2482487b2:5d41402abc4b:[0-9a-f]{32}$/);
    expect(failedCheckSubjectKey(subject)).not.toBe(failedCheckDedupeKey(base));
    expect(failedCheckSubjectKey({ ...subject, contextDigest: "0000000000000000" })).not.toBe(failedCheckSubjectKey(subject));
    const { ruleId: _r, ...request } = { kind: "pr-comment", repository: "acme/web", pullRequestNumber: 12, headSha: "a".repeat(40), command: "diagnose", ruleId: "r" } as const;
    expect(dispatchSubjectKey(request)).toMatch(/^pr-comment-subject:acme\/web:pr-12:aaaaaaaaaaaa:diagnose:[0-9a-f]{32}$/);
  });

  it("stays short enough for a unique index", () => {
    const huge = failedCheckDedupeKey({ ...base, job: "j".repeat(5_000), step: "s".repeat(5_000), repository: `o/${"r".repeat(500)}` });
    expect(huge.length).toBeLessThan(300);
  });
});

describe("checkRerunDedupeKey", () => {
  const p = { originalRunId: "run_41", approvedArtifactDigest: "sha256:1a3c5e7f9b2d4f6a", targetCheck: "test" };
  it("keys original run + approved artifact digest + target check", () => {
    expect(checkRerunDedupeKey(p)).toMatch(/^check-rerun:run_41:sha256-1a3c5e7f9b2d:test:[0-9a-f]{32}$/);
    expect(checkRerunDedupeKey({ ...p, approvedArtifactDigest: "sha256:ffff" })).not.toBe(checkRerunDedupeKey(p));
    expect(checkRerunDedupeKey({ ...p, targetCheck: "lint" })).not.toBe(checkRerunDedupeKey(p));
    expect(checkRerunDedupeKey({ ...p, originalRunId: "run_42" })).not.toBe(checkRerunDedupeKey(p));
    expect(checkRerunDedupeKey({ ...p, approvedArtifactDigest: null })).toMatch(/^check-rerun:run_41:-:test:/);
  });
});

describe("releaseDedupeKey", () => {
  const p = { repository: "acme/web", version: "1.2.0", commitSha: "6113728f27ae82c7b1a177c8d03f9e96e0adf246", artifactDigests: ["sha256:b", "sha256:a"] };
  it("keys repository + version + commit + the digest set, in any order", () => {
    expect(releaseDedupeKey(p)).toMatch(/^release:acme\/web:1\.2\.0:6113728f27ae:2-artifacts:[0-9a-f]{32}$/);
    // A mirror or fork holding the same commit releases its own version: another release.
    expect(releaseDedupeKey({ ...p, repository: "acme/web-mirror" })).not.toBe(releaseDedupeKey(p));
    expect(releaseDedupeKey({ ...p, artifactDigests: ["sha256:a", "sha256:b", "sha256:a"] })).toBe(releaseDedupeKey(p));
    expect(releaseDedupeKey({ ...p, artifactDigests: ["sha256:a"] })).not.toBe(releaseDedupeKey(p));
    expect(releaseDedupeKey({ ...p, version: "1.2.1" })).not.toBe(releaseDedupeKey(p));
    expect(releaseDedupeKey({ ...p, commitSha: "7".repeat(40) })).not.toBe(releaseDedupeKey(p));
  });
});

describe("flakyScanDedupeKey", () => {
  const p = { signature: "077fcdd2482487b2", queryDigest: "5d41402abc4b2a76", resultSetDigest: "7d793037a0760186" };
  it("keys signature + query digest + result set digest", () => {
    expect(flakyScanDedupeKey(p)).toMatch(/^flaky-scan:077fcdd2482487b2:5d41402abc4b:7d793037a076:[0-9a-f]{32}$/);
    for (const patch of [{ signature: "x" }, { queryDigest: "y" }, { resultSetDigest: "z" }]) {
      expect(flakyScanDedupeKey({ ...p, ...patch })).not.toBe(flakyScanDedupeKey(p));
    }
  });
});

describe("dispatchDedupeKey", () => {
  const p = { kind: "pr-comment", repository: "acme/web", pullRequestNumber: 12, headSha: "a".repeat(40), command: "fix_failing_check", ruleId: "r" } as const;
  it("keys repository + PR + head SHA + command + rule", () => {
    expect(dispatchDedupeKey(p)).toMatch(/^pr-comment:acme\/web:pr-12:aaaaaaaaaaaa:fix_failing_check:r:[0-9a-f]{32}$/);
    for (const patch of [{ repository: "acme/api" }, { pullRequestNumber: 13 }, { headSha: "b".repeat(40) }, { command: "diagnose" }, { ruleId: "s" }, { kind: "label" as const }]) {
      expect(dispatchDedupeKey({ ...p, ...patch })).not.toBe(dispatchDedupeKey(p));
    }
    expect(dispatchDedupeKey({ ...p, kind: "manual", pullRequestNumber: null })).toMatch(/^manual:acme\/web:-:/);
  });
});
