import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import type { CiEvent } from "@/server/domain/ci-events/ci-event";
import type { TaskKind, TriggerKind } from "@/server/domain/ci-events/enums";
import { failureContextDigest } from "@/server/domain/ci-events/failure/context-digest";
import { fromGithub } from "@/server/domain/ingest/from-github";
import type { ReleaseFacts } from "./release-facts";
import { dispatchDedupeKey, failedCheckDedupeKey, releaseDedupeKey } from "./dedupe-keys";
import { HEAD, REPO, SIG, actor, checkRerun, failedCheck, flakyScan, manual, prComment, prLabeled, release, rule } from "./fixtures";
import type { EventFacts } from "./match-types";
import { matchTriggers } from "./matcher";
import { APPLICABLE_KEYS, MATCH_KEYS, type MatchKey, type TriggerRule } from "./trigger-rule";

type KindCase = {
  event: CiEvent;
  facts: EventFacts;
  taskKind: TaskKind;
  /** A rule patch that matches, and one that misses, for each applicable key. */
  keys: Partial<Record<MatchKey, { hit: Partial<TriggerRule>; miss: Partial<TriggerRule>; reason: string }>>;
};

const changed = ["src/lib/date.ts", "src/lib/date.test.ts", "README.md"];
const facts: EventFacts = { changedFiles: changed, failureSignature: SIG, headSha: HEAD, headBranch: "feature/dates" };

const repositoryKey = { hit: { repositoryId: REPO.id }, miss: { repositoryId: "repo_api" }, reason: "repository: acme/web is not the rule's repository" };
const workflowKey = { hit: { workflow: "CI" }, miss: { workflow: "Deploy" }, reason: 'workflow: "CI" is not "Deploy"' };
const jobKey = { hit: { job: "test" }, miss: { job: "lint" }, reason: 'job: "test (ubuntu-latest, 20)" is not "lint"' };
const stepKey = { hit: { step: "Run npm test" }, miss: { step: "Run npm ci" }, reason: 'step: "Run npm test" is not "Run npm ci"' };
const branchKey = { hit: { branchGlob: "feature/**" }, miss: { branchGlob: "release/*" }, reason: 'branch: "feature/dates" does not match "release/*"' };
const pathsKey = {
  hit: { pathFilters: ["src/**", "!**/*.md"] },
  miss: { pathFilters: ["docs/**", "!src/**"] },
  reason: "paths: none of 3 changed files match docs/**, !src/**",
};
const signatureKey = { hit: { failureSignature: SIG }, miss: { failureSignature: "0000000000000000" }, reason: `failureSignature: ${SIG} is not 0000000000000000` };

/** What a release's facts loader would read for fixtures' release(). */
const releaseFacts: ReleaseFacts = {
  tag: "v1.2.0",
  version: "1.2.0",
  commitSha: "6113728f27ae82c7b1a177c8d03f9e96e0adf246",
  artifacts: [
    { name: "web-1.2.0.tgz", type: "chart", digest: "sha256:bbb" },
    { name: "acme-web-1.2.0.tgz", type: "npm", digest: "sha256:ccc" },
    { name: "ghcr.io/acme/web:1.2.0", type: "image", digest: "sha256:ddd" },
    { name: "SHA256SUMS", type: "checksum", digest: "sha256:aaa" },
  ],
  checksums: [],
  branches: ["main"],
  branchesFrom: "GitHub names main",
  files: null,
  filesFrom: "not read",
};

const KINDS: Record<TriggerKind, KindCase> = {
  failed_check: {
    event: failedCheck(),
    facts,
    taskKind: "diagnose",
    keys: { repository: repositoryKey, workflow: workflowKey, job: jobKey, step: stepKey, branch: branchKey, paths: pathsKey, failureSignature: signatureKey },
  },
  pr_comment: {
    event: prComment(),
    facts,
    taskKind: "diagnose",
    keys: { repository: repositoryKey, branch: branchKey, paths: pathsKey },
  },
  label: {
    event: prLabeled(),
    facts: { changedFiles: changed },
    taskKind: "diagnose",
    keys: { repository: repositoryKey, branch: branchKey, paths: pathsKey },
  },
  check_rerun: {
    event: checkRerun(),
    facts: {},
    taskKind: "diagnose",
    keys: { repository: repositoryKey, workflow: workflowKey, job: jobKey, step: stepKey, branch: branchKey },
  },
  release: {
    event: release(),
    facts: { release: releaseFacts },
    taskKind: "release_review",
    keys: {
      repository: repositoryKey,
      version: { hit: { releaseVersion: "1.*" }, miss: { releaseVersion: "2.*" }, reason: 'version: "1.2.0" does not match "2.*"' },
      chart: { hit: { releaseChart: "web" }, miss: { releaseChart: "api" }, reason: "chart: the release ships no chart package api-<version>.tgz" },
      npm: { hit: { releaseNpmPackage: "@acme/web" }, miss: { releaseNpmPackage: "@acme/api" }, reason: 'npm: the release ships no npm package "@acme/api" tarball' },
      image: { hit: { releaseImage: "ghcr.io/acme/web" }, miss: { releaseImage: "ghcr.io/acme/api" }, reason: "image: the release ships no image ghcr.io/acme/api:<tag> (GitHub release events carry no images)" },
      checksum: { hit: { releaseChecksum: "SHA256SUMS" }, miss: { releaseChecksum: "CHECKSUMS" }, reason: 'checksum: the release ships no checksum file "CHECKSUMS"' },
      releaseBranch: { hit: { releaseBranch: "main" }, miss: { releaseBranch: "release/*" }, reason: `release branch: the tag's commit is on main, none matching "release/*" (GitHub names main)` },
      workflow: { hit: { workflow: "Publish" }, miss: { workflow: "CI" }, reason: 'workflow: "Publish" is not "CI"' },
      branch: { hit: { branchGlob: "v1.*" }, miss: { branchGlob: "v2.*" }, reason: 'tag: "v1.2.0" does not match "v2.*"' },
    },
  },
  flaky_scan: {
    event: flakyScan(),
    facts: {},
    taskKind: "triage",
    keys: {
      repository: repositoryKey,
      workflow: workflowKey,
      job: jobKey,
      branch: { hit: { branchGlob: "main" }, miss: { branchGlob: "release/*" }, reason: 'branch: "main" does not match "release/*"' },
      paths: { hit: { pathFilters: ["src/lib/**"] }, miss: { pathFilters: ["docs/**"] }, reason: "paths: none of 2 changed files match docs/**" },
      failureSignature: signatureKey,
    },
  },
  manual: {
    event: manual(),
    facts,
    taskKind: "diagnose",
    keys: { repository: repositoryKey, workflow: workflowKey, job: jobKey, step: stepKey, branch: branchKey, paths: pathsKey, failureSignature: signatureKey },
  },
};

const kinds = Object.keys(KINDS) as TriggerKind[];

function run(kind: TriggerKind, patch: Partial<TriggerRule>, extra: Partial<Parameters<typeof matchTriggers>[0]> = {}) {
  const c = KINDS[kind];
  return matchTriggers({ event: c.event, facts: c.facts, repository: REPO, rules: [rule({ kind, taskKind: c.taskKind, ...patch })], ...extra });
}

describe("matchTriggers: every kind matches and misses on each of its keys", () => {
  it("covers exactly the applicable keys of every kind", () => {
    for (const kind of kinds) expect(Object.keys(KINDS[kind].keys).sort(), kind).toEqual([...APPLICABLE_KEYS[kind]].sort());
  });

  describe.each(kinds)("%s", (kind) => {
    it("matches a rule with no keys (null means any)", () => {
      const result = run(kind, {});
      expect(result.triggerKind).toBe(kind);
      expect(result.skipped).toEqual([]);
      expect(result.candidates).toHaveLength(1);
      expect(result.candidates[0]).toMatchObject({ ruleId: `rule_${kind}`, triggerKind: kind, stackId: "stack_diagnoser", matchedOn: [] });
    });

    it.each(Object.entries(KINDS[kind].keys))("on %s", (key, { hit, miss, reason }) => {
      const matched = run(kind, hit);
      expect(matched.candidates.map((c) => c.matchedOn)).toEqual([[key]]);
      const missed = run(kind, miss);
      expect(missed.candidates).toEqual([]);
      expect(missed.skipped).toEqual([{ ruleId: `rule_${kind}`, ruleName: `${kind} rule`, reason }]);
    });

    it("never matches on keys its events cannot carry", () => {
      const notApplicable = MATCH_KEYS.filter((k) => !APPLICABLE_KEYS[kind].includes(k));
      const patches: Record<MatchKey, Partial<TriggerRule>> = {
        repository: { repositoryId: REPO.id },
        workflow: { workflow: "CI" },
        job: { job: "test" },
        step: { step: "Run npm test" },
        branch: { branchGlob: "**" },
        paths: { pathFilters: ["**"] },
        failureSignature: { failureSignature: SIG },
        version: { releaseVersion: "*" },
        chart: { releaseChart: "web" },
        npm: { releaseNpmPackage: "web" },
        image: { releaseImage: "web" },
        checksum: { releaseChecksum: "SHA256SUMS" },
        releaseBranch: { releaseBranch: "*" },
      };
      for (const key of notApplicable) {
        expect(run(kind, patches[key]).skipped[0]?.reason, `${kind} ${key}`).toBe(`${kind} events cannot match on ${key}`);
      }
    });

    it("never matches a disabled rule", () => {
      expect(run(kind, { enabled: false })).toMatchObject({ candidates: [], skipped: [{ reason: "rule is disabled" }] });
    });

    it("only considers rules of its own kind", () => {
      const other = kinds.find((k) => k !== kind) ?? "manual";
      const result = matchTriggers({ event: KINDS[kind].event, facts: KINDS[kind].facts, repository: REPO, rules: [rule({ kind: other })] });
      expect(result).toMatchObject({ candidates: [], skipped: [{ ruleId: null, reason: `no ${kind} rules are configured` }] });
    });
  });
});

describe("matchTriggers: match key details", () => {
  it("matches a repository by name, case-insensitively", () => {
    expect(run("failed_check", { repositoryFullName: "ACME/Web" }).candidates).toHaveLength(1);
    expect(run("failed_check", { repositoryFullName: "acme/api" }).skipped[0]?.reason).toBe("repository: acme/web is not acme/api");
  });

  it("matches the exact job name as well as its matrix base name", () => {
    expect(run("failed_check", { job: "test (ubuntu-latest, 20)" }).candidates).toHaveLength(1);
    expect(run("failed_check", { job: "test (ubuntu-latest, 18)" }).candidates).toHaveLength(0);
  });

  it("fails closed when a path-filtered rule meets unknown changed files", () => {
    const result = matchTriggers({ event: failedCheck(), facts: { ...facts, changedFiles: null }, repository: REPO, rules: [rule({ kind: "failed_check", pathFilters: ["src/**"] })] });
    expect(result.skipped[0]?.reason).toBe("paths: changed files are unknown and the rule filters on them");
  });

  it("accepts only-negative path filters as 'everything but'", () => {
    expect(run("failed_check", { pathFilters: ["!docs/**"] }).candidates).toHaveLength(1);
    const docsOnly = matchTriggers({ event: failedCheck(), facts: { ...facts, changedFiles: ["docs/a.md"] }, repository: REPO, rules: [rule({ kind: "failed_check", pathFilters: ["!docs/**"] })] });
    expect(docsOnly.candidates).toHaveLength(0);
  });

  it("misses a signature rule when no signature was computed", () => {
    const result = matchTriggers({ event: failedCheck(), facts: { ...facts, failureSignature: null }, repository: REPO, rules: [rule({ kind: "failed_check", failureSignature: SIG })] });
    expect(result.skipped[0]?.reason).toBe(`failureSignature: not computed for this event, the rule wants ${SIG}`);
  });

  it("misses a step rule for a check that reports no steps", () => {
    const result = matchTriggers({ event: failedCheck({ step: null }), facts, repository: REPO, rules: [rule({ kind: "failed_check", step: "Run npm test" })] });
    expect(result.skipped[0]?.reason).toBe('step: the event has none, the rule wants "Run npm test"');
  });

  it("checks keys in order and reports the first miss", () => {
    const result = run("failed_check", { workflow: "Deploy", job: "lint" });
    expect(result.skipped[0]?.reason).toBe('workflow: "CI" is not "Deploy"');
  });
});

describe("matchTriggers: actions", () => {
  it.each([
    ["suggest", false, "suggest", "suggestion: the rule suggests"],
    ["auto_run", false, "suggest", "suggestion: the repository policy does not allow auto-run on failed checks"],
    ["suggest", true, "suggest", "suggestion: the rule suggests"],
    ["auto_run", true, "auto_run", "auto-run: the rule and the repository policy allow it"],
  ] as const)("failed check, rule %s, policy auto-run %s -> %s", (ruleAction, policy, action, why) => {
    const result = run("failed_check", { action: ruleAction }, { repository: { ...REPO, autoRunOnFailedCheck: policy } });
    expect(result.candidates[0]?.action).toBe(action);
    expect(result.candidates[0]?.reason).toMatch(new RegExp(`; ${why.replace(/[()]/g, "\\$&")}$`));
  });

  it.each(["pr_comment", "label", "manual", "check_rerun"] as const)("%s dispatches even when the rule says suggest", (kind) => {
    expect(run(kind, { action: "suggest" }).candidates[0]?.action).toBe("auto_run");
  });

  it.each(["release", "flaky_scan"] as const)("%s follows the rule's action", (kind) => {
    expect(run(kind, { action: "auto_run" }).candidates[0]?.action).toBe("auto_run");
    expect(run(kind, { action: "suggest" }).candidates[0]?.action).toBe("suggest");
  });

  it("carries the rule's task kind, stack and run source", () => {
    expect(run("release", { stackId: "stack_release" }).candidates[0]).toMatchObject({ taskKind: "release_review", stackId: "stack_release", source: "release" });
    expect(run("flaky_scan", {}).candidates[0]).toMatchObject({ taskKind: "triage", source: "flaky_scan" });
  });
});

describe("matchTriggers: requests a person makes", () => {
  it.each([
    ["diagnose", "diagnose"],
    ["fix_failing_check", "repair"],
    ["triage", "triage"],
  ] as const)("@agent %s matches only %s rules", (command, taskKind) => {
    const rules = (["diagnose", "repair", "triage"] as const).map((t) => rule({ kind: "pr_comment", id: `r_${t}`, taskKind: t }));
    const result = matchTriggers({ event: prComment({ command }), facts, repository: REPO, rules });
    expect(result.candidates.map((c) => c.taskKind)).toEqual([taskKind]);
    expect(result.skipped).toHaveLength(2);
  });

  it("never dispatches on cancel", () => {
    expect(matchTriggers({ event: prComment({ command: "cancel" }), facts, repository: REPO, rules: [rule({ kind: "pr_comment" })] })).toEqual({
      triggerKind: null,
      refusal: null,
      candidates: [],
      skipped: [{ ruleId: null, ruleName: null, reason: "cancel stops the pull request's active runs; it dispatches nothing" }],
    });
  });

  it.each([
    [actor("newbie", { association: "FIRST_TIME_CONTRIBUTOR" }), "newbie may not dispatch: FIRST_TIME_CONTRIBUTOR: a first-time contributor; only OWNER, MEMBER or COLLABORATOR may dispatch"],
    [actor("someone", { association: "CONTRIBUTOR" }), "someone may not dispatch: CONTRIBUTOR: a past contributor without write access; only OWNER, MEMBER or COLLABORATOR may dispatch"],
    [actor("helper[bot]", { type: "bot", association: "MEMBER" }), "helper[bot] may not dispatch: bots cannot dispatch agent runs (prevents bot-to-bot loops)"],
  ])("refuses a comment from %j", (who, reason) => {
    const result = matchTriggers({ event: prComment({ actor: who }), facts, repository: REPO, rules: [rule({ kind: "pr_comment" })] });
    expect(result).toEqual({ triggerKind: "pr_comment", refusal: reason, candidates: [], skipped: [{ ruleId: null, ruleName: null, reason }] });
  });

  it("reports a refused request as a refusal only when a rule could have dispatched it", () => {
    const newbie = prComment({ actor: actor("newbie", { association: "FIRST_TIME_CONTRIBUTOR" }) });
    expect(matchTriggers({ event: newbie, facts, repository: REPO, rules: [rule({ kind: "pr_comment" })] }).refusal).toContain("newbie may not dispatch");
    expect(matchTriggers({ event: newbie, facts, repository: REPO, rules: [rule({ kind: "label" })] }).refusal).toBeNull();
  });

  it("refuses requests on closed pull requests", () => {
    const closed = prComment({ pullRequest: { number: 12, url: null, title: "x", state: "closed", author: "octocat" } });
    expect(matchTriggers({ event: closed, facts, repository: REPO, rules: [rule({ kind: "pr_comment" })] }).skipped[0]?.reason).toBe("pull request #12 is closed");
  });

  it("needs the PR's head SHA for a comment's dedupe key", () => {
    const result = matchTriggers({ event: prComment(), facts: { ...facts, headSha: null }, repository: REPO, rules: [rule({ kind: "pr_comment" })] });
    expect(result.skipped[0]?.reason).toBe("the pull request's head SHA is unknown: resolve the pull request first");
  });

  it("dispatches only on the repository's dispatch label, in any case", () => {
    const rules = [rule({ kind: "label" })];
    expect(matchTriggers({ event: prLabeled("Agent:Diagnose"), repository: REPO, rules }).candidates).toHaveLength(1);
    expect(matchTriggers({ event: prLabeled("bug"), repository: REPO, rules })).toMatchObject({
      triggerKind: null,
      skipped: [{ reason: 'label "bug" is not the dispatch label "agent:diagnose"' }],
    });
  });

  it("refuses a label applied by a bot", () => {
    const result = matchTriggers({ event: prLabeled("agent:diagnose", { actor: actor("renovate[bot]", { type: "bot", association: null }) }), repository: REPO, rules: [rule({ kind: "label" })] });
    expect(result.skipped[0]?.reason).toMatch(/^renovate\[bot\] may not dispatch: bots cannot/);
  });

  it("refuses a manual request from a viewer and honours a named rule", () => {
    const viewer = manual({ actor: actor("v", { association: null, airlockRole: "viewer" }) });
    expect(matchTriggers({ event: viewer, facts, repository: REPO, rules: [rule({ kind: "manual" })] }).skipped[0]?.reason).toBe(
      "v may not dispatch: Airlock viewer of the repository; dispatch needs maintainer or admin",
    );
    const rules = [rule({ kind: "manual", id: "a" }), rule({ kind: "manual", id: "b" })];
    const named = matchTriggers({ event: manual({ ruleId: "b" }), facts, repository: REPO, rules });
    expect(named.candidates.map((c) => c.ruleId)).toEqual(["b"]);
    expect(named.skipped).toEqual([{ ruleId: "a", ruleName: "manual rule", reason: "the request named another rule" }]);
  });

  it("needs an approval record behind a rerun a bot asks for", () => {
    const bot = checkRerun({ actor: actor("airlock[bot]", { type: "bot", association: null }), approvalId: null });
    expect(matchTriggers({ event: bot, repository: REPO, rules: [rule({ kind: "check_rerun" })] }).skipped[0]?.reason).toBe(
      "a rerun requested by a bot needs an approval record",
    );
  });
});

describe("matchTriggers: failed checks from GitHub", () => {
  const fixture = (name: string) => JSON.parse(readFileSync(new URL(`../ingest/fixtures/github/${name}`, import.meta.url), "utf8")) as unknown;
  const rules = [rule({ kind: "failed_check", workflow: "CI", job: "test" })];

  it("turns a failed workflow job into a diagnosis suggestion with the spec's dedupe key", () => {
    const event = fromGithub("workflow_job", fixture("workflow_job.completed.failure.json"));
    const result = matchTriggers({ event, rules, repository: { ...REPO, fullName: "Codertocat/Hello-World" }, facts: { pullRequestNumber: 2, failureSignature: SIG } });
    expect(result.candidates).toHaveLength(1);
    expect(result.candidates[0]).toMatchObject({ action: "suggest", taskKind: "diagnose", source: "failed_check" });
    expect(result.candidates[0]?.dedupeKey).toBe(
      failedCheckDedupeKey({
        repository: "Codertocat/Hello-World",
        pullRequestNumber: 2,
        checkSource: "CI",
        commitSha: "ec26c3e57ca3a959ca5aad62de7213c562f8c821",
        job: "test (ubuntu-latest, 20)",
        step: "Run npm test",
        failureSignature: SIG,
        // No log or artifacts known: the context digest of nothing.
        contextDigest: failureContextDigest({ logExcerpt: null, artifactDigests: [] }),
        ruleId: "rule_failed_check",
      }),
    );
  });

  it("skips a failed workflow run as a whole unless asked, but matches a startup failure", () => {
    const pipeline = fromGithub("workflow_run", fixture("workflow_run.completed.failure.json"));
    const anyRule = [rule({ kind: "failed_check" })];
    expect(matchTriggers({ event: pipeline, rules: anyRule, repository: REPO }).skipped[0]?.reason).toBe(
      'workflow "CI" failed as a whole: its failing jobs arrive as job-level events',
    );
    expect(matchTriggers({ event: pipeline, rules: anyRule, repository: REPO, options: { matchPipelineFailures: true } }).candidates).toHaveLength(1);
    const startup = failedCheck({ level: "pipeline", via: "workflow_run", jobName: null, step: null, conclusion: "startup_failure" });
    expect(matchTriggers({ event: startup, rules: anyRule, repository: REPO }).candidates).toHaveLength(1);
  });

  it("gives the same failure on a redelivery the same key, and another commit a new one", () => {
    const once = run("failed_check", {}).candidates[0]?.dedupeKey;
    expect(run("failed_check", {}).candidates[0]?.dedupeKey).toBe(once);
    const other = matchTriggers({ event: failedCheck({ headSha: "b".repeat(40) }), facts, repository: REPO, rules: [rule({ kind: "failed_check" })] });
    expect(other.candidates[0]?.dedupeKey).not.toBe(once);
  });

  it.each([
    ["pr_updated", fixture("pull_request.synchronize.json"), "pull_request", "pull request synchronize: updates the record, dispatches nothing"],
    ["pr_review", fixture("pull_request_review.submitted.json"), "pull_request_review", "review stored as pull request discussion; dispatches nothing"],
    ["branch_push", fixture("push.branch.json"), "push", "push to main: records where the commit comes from, dispatches nothing"],
  ])("dispatches nothing for %s", (_type, payload, eventName, reason) => {
    const result = matchTriggers({ event: fromGithub(eventName, payload), rules: kinds.map((k) => rule({ kind: k })), repository: REPO });
    expect(result).toEqual({ triggerKind: null, refusal: null, candidates: [], skipped: [{ ruleId: null, ruleName: null, reason }] });
  });
});

describe("matchTriggers: dedupe keys per kind", () => {
  it("keys comment, label and manual dispatches on repository, PR, head SHA, command and rule", () => {
    expect(run("pr_comment", {}).candidates[0]?.dedupeKey).toBe(
      dispatchDedupeKey({ kind: "pr-comment", repository: "acme/web", pullRequestNumber: 12, headSha: HEAD, command: "diagnose", ruleId: "rule_pr_comment" }),
    );
    expect(run("label", {}).candidates[0]?.dedupeKey).toBe(
      dispatchDedupeKey({ kind: "label", repository: "acme/web", pullRequestNumber: 12, headSha: HEAD, command: "label:agent:diagnose", ruleId: "rule_label" }),
    );
    expect(run("manual", {}).candidates[0]?.dedupeKey).toMatch(/^manual:acme\/web:pr-12:aa00bb11cc22:diagnose:rule_manual:[0-9a-f]{32}$/);
  });

  it("keys a release on version, commit and the artifact digest set", () => {
    expect(run("release", {}).candidates[0]?.dedupeKey).toBe(
      releaseDedupeKey({ repository: REPO.fullName, version: "1.2.0", commitSha: "6113728f27ae82c7b1a177c8d03f9e96e0adf246", artifactDigests: ["sha256:aaa", "sha256:bbb"] }),
    );
    const unresolved = matchTriggers({ event: release({ commitSha: null }), repository: REPO, rules: [rule({ kind: "release", taskKind: "release_review" })] });
    expect(unresolved.skipped[0]?.reason).toBe("the release's commit is unknown: resolve the tag to a commit first");
  });

  it("keys a flaky scan and a rerun without the rule (the spec's keys have none)", () => {
    const a = run("flaky_scan", { id: "one" }).candidates[0]?.dedupeKey;
    expect(run("flaky_scan", { id: "two" }).candidates[0]?.dedupeKey).toBe(a);
    expect(run("check_rerun", {}).candidates[0]?.dedupeKey).toMatch(/^check-rerun:run_41:sha256-1a3c5e7f9b2d:test-ubuntu-latest-20:[0-9a-f]{32}$/);
  });
});
