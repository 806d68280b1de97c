// Assemble a context bundle from plain records (no database): bounded, redacted log excerpts,
// the failure (signature, tests, error lines, stack trace, file paths), sorted sets, a redaction
// pass over every string, then the canonical JSON and its digest.
import { AppError } from "@/server/errors";
import { failureSignature } from "@/server/domain/ci-events/failure/failure-signature";
import { formatIssues, issuesToText, requiredMessage } from "@/server/lib/zod-issues";
import type { TaskKind } from "@/server/domain/ci-events/enums";
import { canonicalJson } from "@/server/lib/canonical-json";
import { contentDigest } from "@/server/lib/digest";
import {
  CONTEXT_BUNDLE_VERSION,
  zContextBundle,
  type BundleActor,
  type BundleArtifact,
  type BundleAttribution,
  type BundleFailure,
  type BundleIdentity,
  type BundleJob,
  type BundleLog,
  type BundlePipeline,
  type BundlePolicy,
  type BundlePullRequest,
  type BundleRef,
  type BundleRepository,
  type BundleSource,
  type BundleStack,
  type ContextBundle,
  type ContextLabel,
} from "./context-bundle";
import { buildLogExcerpt, type LogExcerptOptions } from "./log-excerpt";
import { mergeReports, redactDeep, redactText, reportFromMarkers, type KnownSecret, type RedactionReport } from "./redaction/redact";

export const DEFAULT_OUTPUT_FORMATS: Record<TaskKind, string> = {
  diagnose:
    "A Markdown diagnosis: what failed, the most likely cause with evidence from the logs, and the likely fix paths. Do not change code.",
  repair:
    "A Markdown summary of the fix and a unified diff patch artifact that makes the failing check pass. Never push: the patch waits for approval.",
  triage:
    "A Markdown triage report: suspected flake source, affected tests, owners, confidence and recommended next actions.",
  release_review:
    "A Markdown release-readiness report: artifact completeness, checksum consistency, version alignment, release-note gaps and deployment policy. Do not publish.",
};

export type RawLog = {
  name: string;
  /** The full log as CI produced it; it is redacted before anything is kept. */
  text: string;
  /** 1-based line to centre the excerpt on; default: the first failure found in the log. */
  focusLine?: number | null;
};

type Nullable<T> = { [K in keyof T]?: T[K] | null };

export type ContextBundleInput = {
  task: { kind: TaskKind; outputFormat?: string };
  repository: BundleRepository;
  ref: Nullable<Omit<BundleRef, "commitSha">> & { commitSha: string };
  source: Nullable<Omit<BundleSource, "kind" | "via">> & Pick<BundleSource, "kind" | "via">;
  actor: BundleActor;
  pullRequest?:
    | (Omit<BundlePullRequest, "discussion" | "draft" | "reviewState" | "mergeable" | "url"> &
        Partial<Pick<BundlePullRequest, "discussion" | "draft" | "reviewState" | "mergeable" | "url">>)
    | null;
  pipeline?: BundlePipeline | null;
  job?: BundleJob | null;
  /** The failed job's log first: the failure signature is read from it. */
  logs?: RawLog[];
  artifacts?: Array<Pick<BundleArtifact, "name" | "type"> & Nullable<Omit<BundleArtifact, "name" | "type">>>;
  /** Known facts about the failure; anything missing is read from the first log. */
  failure?: Partial<BundleFailure> | null;
  stack: BundleStack;
  policy: BundlePolicy;
  identity?: Partial<BundleIdentity>;
  contextLabels?: ContextLabel[];
  /** Red checks on the branch attributed by policy (fix-forward loop); omitted when none. */
  attribution?: BundleAttribution[];
};

export type BuildContextOptions = {
  /** Granted secret values to redact (names go in the report, values nowhere). */
  secrets?: readonly KnownSecret[];
  excerpt?: Omit<LogExcerptOptions, "focusLine">;
};

export type BuiltContext = {
  bundle: ContextBundle;
  /** The exact text that was hashed. */
  canonical: string;
  /** sha256 hex of `canonical`: AgentDispatchRun.contextDigest. */
  digest: string;
};

export function buildContextBundle(input: ContextBundleInput, options: BuildContextOptions = {}): BuiltContext {
  const secrets = options.secrets ?? [];
  const rawLogs = input.logs ?? [];
  const first = rawLogs[0];
  const signature = first ? failureSignature(first.text, { jobName: input.job?.name ?? null }) : null;

  const logs: BundleLog[] = rawLogs.map((log, i) => {
    const redacted = redactText(log.text, { secrets });
    const focus =
      log.focusLine !== undefined ? log.focusLine : i === 0 && signature ? signature.firstErrorLine : undefined;
    // Redaction keeps line numbers, so a focus found in the raw log is valid in the redacted one.
    const excerpt = buildLogExcerpt(redacted.text, { ...options.excerpt, focusLine: focus });
    return {
      name: log.name,
      excerpt: excerpt.text,
      startLine: excerpt.startLine,
      endLine: excerpt.endLine,
      focusLine: excerpt.focusLine,
      totalLines: excerpt.totalLines,
      truncated: excerpt.truncated,
      // Logs stored by ingest were redacted there: their markers count too.
      redaction: mergeReports([reportFromMarkers(log.text), redacted.report]),
    };
  });

  const failure = buildFailure(input.failure, signature, logs[0]?.excerpt ?? "");
  const pr = input.pullRequest;
  const draft: Omit<ContextBundle, "redaction"> = {
    version: CONTEXT_BUNDLE_VERSION,
    task: { kind: input.task.kind, outputFormat: input.task.outputFormat ?? DEFAULT_OUTPUT_FORMATS[input.task.kind] },
    repository: input.repository,
    ref: {
      branch: input.ref.branch ?? null,
      commitSha: input.ref.commitSha,
      headRef: input.ref.headRef ?? null,
      headSha: input.ref.headSha ?? null,
      baseRef: input.ref.baseRef ?? null,
      baseSha: input.ref.baseSha ?? null,
      isFork: input.ref.isFork ?? null,
      headRepoFullName: input.ref.headRepoFullName ?? null,
      tag: input.ref.tag ?? null,
    },
    source: {
      kind: input.source.kind,
      via: input.source.via,
      triggerRuleId: input.source.triggerRuleId ?? null,
      triggerRuleName: input.source.triggerRuleName ?? null,
      deliveryId: input.source.deliveryId ?? null,
      eventName: input.source.eventName ?? null,
      command: input.source.command ?? null,
      label: input.source.label ?? null,
      url: input.source.url ?? null,
      parentRunId: input.source.parentRunId ?? null,
    },
    actor: input.actor,
    pullRequest: pr
      ? {
          number: pr.number,
          title: pr.title,
          body: pr.body,
          url: pr.url ?? null,
          author: pr.author,
          draft: pr.draft ?? false,
          // Sets, sorted so the digest does not depend on the order a forge listed them in.
          labels: sortedUnique(pr.labels),
          changedFiles: sortedUnique(pr.changedFiles),
          reviewState: pr.reviewState ?? null,
          mergeable: pr.mergeable ?? null,
          discussion: pr.discussion ?? [],
        }
      : null,
    pipeline: input.pipeline ?? null,
    job: input.job ?? null,
    logs,
    artifacts: (input.artifacts ?? [])
      .map((a) => ({
        name: a.name,
        type: a.type,
        url: a.url ?? null,
        digest: a.digest ?? null,
        sizeBytes: a.sizeBytes ?? null,
        retainUntil: a.retainUntil ?? null,
      }))
      .sort((a, b) => compare(a.name, b.name) || compare(a.url ?? "", b.url ?? "")),
    failure,
    stack: {
      ...input.stack,
      tools: sortedUnique(input.stack.tools),
      skills: sortedUnique(input.stack.skills),
      subagents: sortedUnique(input.stack.subagents),
      mcpServers: [...input.stack.mcpServers].sort((a, b) => compare(a.name, b.name)),
    },
    policy: {
      ...input.policy,
      allowedTools: sortedUnique(input.policy.allowedTools),
      writeBackExceptions: sortedUnique(input.policy.writeBackExceptions),
      networkAllowlist: sortedUnique(input.policy.networkAllowlist),
    },
    identity: {
      runnerPool: input.identity?.runnerPool ?? null,
      trustTier: input.identity?.trustTier ?? null,
      runtimeServiceAccount: input.identity?.runtimeServiceAccount ?? null,
      runnerServiceAccount: input.identity?.runnerServiceAccount ?? null,
      nativeRoles: sortedUnique(input.identity?.nativeRoles ?? []),
      secretGrants: [...(input.identity?.secretGrants ?? [])].sort((a, b) => compare(a.secretName, b.secretName)),
      configGrants: [...(input.identity?.configGrants ?? [])].sort((a, b) => compare(a.configMapName, b.configMapName)),
    },
    // Order is meaningful here: fragments are rendered into the prompt in this order.
    contextLabels: input.contextLabels ?? [],
    // One entry per check, in name order: the same attributions give the same digest.
    ...(input.attribution && input.attribution.length > 0
      ? { attribution: [...input.attribution].sort((a, b) => compare(a.check, b.check)) }
      : {}),
  };

  // Every string, not just logs: PR bodies, comments and URLs leak tokens too.
  const deep = redactDeep(draft, { secrets });
  const redaction: RedactionReport = mergeReports([...logs.map((l) => l.redaction), deep.report]);
  const parsed = zContextBundle.safeParse({ ...deep.value, redaction }, { error: requiredMessage });
  if (!parsed.success) {
    const issues = formatIssues(parsed.error.issues);
    throw new AppError("UNPROCESSABLE", `invalid context bundle: ${issuesToText(issues)}`, {
      reason: "invalid_context_bundle",
      details: { issues },
    });
  }
  const canonical = canonicalJson(parsed.data);
  return { bundle: parsed.data, canonical, digest: contentDigest(canonical) };
}

function buildFailure(
  known: Partial<BundleFailure> | null | undefined,
  signature: ReturnType<typeof failureSignature> | null,
  excerpt: string,
): BundleFailure | null {
  if (known === null || (known === undefined && signature === null)) return null;
  const errorLines = known?.errorLines ?? signature?.errorLines ?? [];
  const testNames = sortedUnique(known?.testNames ?? signature?.failingTests ?? []);
  return {
    signature: known?.signature ?? signature?.signature ?? null,
    stackTrace: known?.stackTrace !== undefined ? known.stackTrace : deriveStackTrace(excerpt),
    testNames,
    errorLines,
    filePaths: sortedUnique(known?.filePaths ?? extractFilePaths([...errorLines, ...testNames])),
    similarRuns: known?.similarRuns ?? [],
  };
}

const FRAME_START = /^(?:Traceback \(most recent call last\):|goroutine \d+ \[|stack backtrace:|\s+at \S)/;
const FRAME_LINE = /^(?:\s+\S|goroutine \d+ \[|\S+\(.*\)$|Traceback|stack backtrace:)/;
const MAX_STACK_LINES = 40;

/** The first stack trace in the excerpt (JavaScript, Python, Go, Rust, JVM), or null. */
export function deriveStackTrace(text: string): string | null {
  const lines = text.split("\n");
  const start = lines.findIndex((l) => FRAME_START.test(l));
  if (start === -1) return null;
  const out: string[] = [];
  for (let i = start; i < lines.length && out.length < MAX_STACK_LINES; i++) {
    const line = lines[i] ?? "";
    if (line.trim() === "" || (i > start && !FRAME_LINE.test(line))) break;
    out.push(line);
  }
  return out.join("\n");
}

const SOURCE_PATH =
  /(?<![\w./-])((?:[\w.-]+\/)*[\w.-]+\.(?:[cm]?[jt]sx?|py|go|rs|c|h|cc|cpp|hpp|java|kt|rb|php|cs|swift|vue|svelte|ya?ml|json|toml|tf))(?![\w])/g;

/** Repository paths mentioned in error lines and test names (sorted, at most 50). */
export function extractFilePaths(texts: readonly string[]): string[] {
  const found = new Set<string>();
  for (const text of texts) {
    for (const m of text.matchAll(SOURCE_PATH)) {
      const path = m[1] ?? "";
      if (!path.startsWith("node_modules/") && !path.startsWith("/")) found.add(path);
    }
  }
  return [...found].sort(compare).slice(0, 50);
}

function sortedUnique<T extends string>(values: readonly T[]): T[] {
  return [...new Set(values)].sort(compare);
}

/** Code-unit order, like canonical JSON keys: locale-independent. */
function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
