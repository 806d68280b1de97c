// The CI-triage policy's facts, derived from what Airlock stored about a failure (the Pipeline and
// Job rows, earlier attempts of the same check, the same failure signature elsewhere), never
// guessed. Pure: `history.ts` reads the records, this turns them into facts with provenance.
import type { FactSource, Facts } from "@/server/domain/policy/facts";

export type FailingStage = "lint" | "test" | "build" | "deploy";

export type TriageHistory = {
  /** Where the failure was reported: a GitHub webhook, or Airlock's own local CI. */
  origin: "github" | "local" | "airlock";
  /** Names that say which stage failed, most specific first (job, step, check, workflow). */
  names: { jobName: string | null; step: string | null; checkName: string | null; workflowName: string | null };
  failingTests: readonly string[];
  signature: string | null;
  /** GitHub's run_attempt (1 for a first run); null when the forge does not say. */
  runAttempt: number | null;
  /** Earlier failed attempts of the same check at the same head SHA, with their signatures. */
  earlierFailedAttempts: readonly { signature: string | null }[];
  /**
   * Head SHAs where this signature failed and the same check also passed: the failure does not
   * follow the code, which is what "flaky" means. Includes the current head when it passed before.
   */
  flakyEvidence: readonly { headSha: string }[];
};

export type DerivedFacts = {
  facts: Facts;
  /** One line per fact: how it was derived (stored on the triage row's detail, shown in tests). */
  notes: string[];
  stage: FailingStage | null;
};

// Order matters within a name: a "deploy" job that runs tests is still a deploy.
const STAGE_PATTERNS: [FailingStage, RegExp][] = [
  ["deploy", /\b(deploy(ment)?s?|rollout|roll-out|release|publish|helm|terraform|kubectl|provision)\b/i],
  ["lint", /\b(lint(er|ing)?|eslint|prettier|format(ting)?|fmt|clippy|ruff|flake8|stylelint|golangci(-lint)?|black|mypy)\b/i],
  ["test", /\b(tests?|spec|specs|e2e|pytest|jest|vitest|playwright|mocha|unit|integration|go test|cargo test)\b/i],
  ["build", /\b(build|compile|tsc|typecheck|type-check|docker|bundle|webpack|vite build|cargo build|make|package)\b/i],
];

/** The failing stage named by the job, step, check or workflow name, in that order. */
export function classifyStage(names: TriageHistory["names"], failingTests: readonly string[]): FailingStage | null {
  for (const name of [names.jobName, names.step, names.checkName, names.workflowName]) {
    if (!name) continue;
    // "lint-and-test", "unit_tests": separators count as word breaks.
    const words = name.replace(/[_\-/:.]+/g, " ");
    for (const [stage, pattern] of STAGE_PATTERNS) if (pattern.test(words)) return stage;
  }
  // Failing test names were parsed from the log: that is a test stage whatever the job is called.
  return failingTests.length > 0 ? "test" : null;
}

export function deriveTriageFacts(history: TriageHistory): DerivedFacts {
  const facts: Facts = {};
  const notes: string[] = [];
  // The stage comes from names the forge reported; the rest Airlock derived from its records.
  const reported: FactSource = history.origin === "github" ? "webhook" : "system";

  // The local CI names its one job "test" whatever the check command does: there the command,
  // which the repository chose, names the stage (else a failed deploy could never roll back).
  const stage = classifyStage(history.origin === "local" ? { ...history.names, jobName: null } : history.names, history.failingTests);
  if (stage) {
    facts.failing_stage = { value: stage, source: reported };
    notes.push(`failing_stage = ${stage} (from ${describeNames(history.names)})`);
  } else {
    notes.push(`failing_stage unknown: no stage in ${describeNames(history.names)}`);
  }

  if (history.signature === null) {
    notes.push("known_flaky absent: the failure has no signature to look up");
  } else {
    const flaky = history.flakyEvidence.length > 0;
    facts.known_flaky = { value: flaky, source: "system" };
    notes.push(
      flaky
        ? `known_flaky = true: signature ${history.signature} failed where the same check also passed (${history.flakyEvidence
            .slice(0, 3)
            .map((e) => e.headSha.slice(0, 12))
            .join(", ")})`
        : `known_flaky = false: signature ${history.signature} never failed on a commit where the check passed`,
    );
  }

  const byAttempt = history.runAttempt !== null ? Math.max(0, history.runAttempt - 1) : 0;
  const priorReruns = Math.max(byAttempt, history.earlierFailedAttempts.length);
  facts.prior_reruns = { value: priorReruns, source: "system" };
  notes.push(`prior_reruns = ${priorReruns} (run attempt ${history.runAttempt ?? "unknown"}, ${history.earlierFailedAttempts.length} earlier failed attempt(s) at this head)`);

  // Only a rerun can reproduce: on a first attempt the fact is absent (closed world).
  if (priorReruns > 0 && history.signature !== null) {
    const earlier = history.earlierFailedAttempts.filter((a) => a.signature !== null);
    if (earlier.length > 0) {
      const same = earlier.some((a) => a.signature === history.signature);
      facts.reproduces_on_rerun = { value: same, source: "system" };
      notes.push(`reproduces_on_rerun = ${same}: ${same ? "an earlier attempt failed with the same signature" : "earlier attempts failed differently"}`);
    } else if (byAttempt > 0) {
      // A GitHub rerun whose earlier attempt Airlock never saw the log of: the same check
      // failing again at the same commit is the reproduction.
      facts.reproduces_on_rerun = { value: true, source: "system" };
      notes.push(`reproduces_on_rerun = true: attempt ${history.runAttempt} of the same check failed again`);
    }
  }
  return { facts, notes, stage };
}

function describeNames(names: TriageHistory["names"]): string {
  const parts = [
    names.jobName && `job "${names.jobName}"`,
    names.step && `step "${names.step}"`,
    names.checkName && `check "${names.checkName}"`,
    names.workflowName && `workflow "${names.workflowName}"`,
  ].filter(Boolean);
  return parts.length > 0 ? parts.join(", ") : "no names";
}
