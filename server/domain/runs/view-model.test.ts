import { describe, expect, it } from "vitest";
import { admissionView, contextView, stackView } from "./view-model";

describe("contextView", () => {
  it("reads the seed-era bundle (labels with provenance strings, log excerpts, string grants)", () => {
    const v = contextView({
      source: { kind: "failed_check", detail: "CI / test failed" },
      pullRequest: { url: "https://forge.test/pr/1", labels: ["bug"], changedFiles: ["a.ts"] },
      logs: { excerpts: [{ job: "test", step: "npm test", startLine: 120, text: "boom" }], redaction: { status: "redacted" } },
      artifacts: [{ name: "junit.xml", type: "test-report", url: "https://ci.test/a", digest: "sha256:x" }],
      failure: { signature: "sig", testNames: ["t1"], errorLine: "Error: x" },
      identity: { runnerPool: "trusted-local", runtimeServiceAccount: "rt", runnerServiceAccount: "rn", nativeRoles: ["contents:read"], secretGrants: ["GITHUB_TOKEN"], configMapGrants: ["cm"] },
      contextLabels: [{ label: "failed-log-window", provenance: "test › npm test", bytes: 12 }],
    });
    expect(v).toMatchObject({
      sourceUrl: "https://forge.test/pr/1",
      sourceDetail: "CI / test failed",
      labels: ["bug"],
      changedFiles: ["a.ts"],
      logExcerpts: [{ name: "test › npm test", startLine: 120, text: "boom" }],
      failure: { signature: "sig", testNames: ["t1"], errorLines: ["Error: x"] },
      identity: { secretGrants: ["GITHUB_TOKEN"], configMapGrants: ["cm"] },
      contextLabels: [{ label: "failed-log-window", provenance: "test › npm test", bytes: 12 }],
      redaction: "redacted",
    });
  });

  it("reads the versioned bundle (named labels, log list, object grants)", () => {
    const v = contextView({
      source: { kind: "pr_comment", url: "https://forge.test/c/1", command: "diagnose" },
      logs: [{ name: "build", excerpt: "x", startLine: 3 }],
      identity: { secretGrants: [{ secretName: "S", privileged: true }], configGrants: [{ configMapName: "C" }], nativeRoles: [] },
      contextLabels: [{ name: "pr-description", fragment: "abcd", provenance: { source: "repository", ref: "acme/x" } }],
      redaction: { count: 1 },
    });
    expect(v.logExcerpts).toEqual([{ name: "build", startLine: 3, text: "x" }]);
    expect(v.identity).toMatchObject({ secretGrants: ["S"], configMapGrants: ["C"] });
    expect(v.contextLabels).toEqual([{ label: "pr-description", provenance: "repository: acme/x", bytes: 4 }]);
    expect(v.sourceDetail).toBe("diagnose");
  });

  it("shows nothing rather than breaking on a bundle of the wrong shape", () => {
    expect(contextView("nonsense")).toMatchObject({ labels: [], contextLabels: [], logExcerpts: [], identity: null, failure: null });
    expect(contextView({ logs: 5, contextLabels: [null, 3, { label: 7 }], pullRequest: { labels: [1, "ok"] } })).toMatchObject({ labels: ["ok"], contextLabels: [] });
  });
});

describe("stackView and admissionView", () => {
  it("validates the snapshot's spec and tolerates an old one", () => {
    expect(stackView({ name: "s", version: 2, spec: { nope: true } })).toEqual({ name: "s", version: 2, spec: null });
    const spec = { modelProvider: "anthropic", model: "m", adapter: { kind: "scripted", scenario: "x" }, promptTemplate: "p" };
    expect(stackView({ name: "s", version: 1, spec }).spec).toMatchObject({ model: "m", tools: [], limits: { maxRetries: 2 } });
  });

  it("reads an admission decision and drops an invalid one", () => {
    const a = {
      admitted: true,
      poolName: "p",
      trustTier: "trusted",
      runtimeServiceAccount: "rt",
      runnerServiceAccount: "rn",
      secretsGranted: ["A"],
      secretsDenied: [{ name: "B", reason: "fork" }],
      configMapsGranted: [],
      summary: "ok",
    };
    expect(admissionView(a)).toEqual(a);
    expect(admissionView({ admitted: "yes" })).toBeNull();
    expect(admissionView(null)).toBeNull();
  });
});
