// Failure signatures: a short hash of what failed (test names, first error lines), normalised so
// the same failure on two commits or two runs hashes the same and different failures differ.
import { createHash } from "node:crypto";
import { EXTRACTORS, genericFindings, isBoilerplate, type Finding } from "./extractors";
import { cleanLine, normaliseForSignature, normaliseJobName, splitLines, type CleanLine } from "./normalise";

/** Bumped when the normalisation changes, so old and new signatures never collide by accident. */
export const SIGNATURE_VERSION = 1;
/** Hex characters kept from the sha256 (64 bits): ample for per-repository failure groups. */
export const SIGNATURE_HEX_LENGTH = 16;
const DEFAULT_MAX_ERROR_LINES = 8;
const MAX_TESTS = 200;
/** Extractors read at most this much of a line (keeps every regex's work per line bounded). */
const MAX_EXTRACT_LINE = 2_000;
const TAIL_LINES = 5;

export type FailureSignatureOptions = {
  /** The failed job; matrix parts in parentheses are dropped ("test (node 20)" -> "test"). */
  jobName?: string | null;
  maxErrorLines?: number;
};

export type FailureSignature = {
  /** sha256 hex prefix of the normalised failure. */
  signature: string;
  /** Failing test names, normalised and sorted. */
  failingTests: string[];
  /** The first distinct error lines, normalised (exactly what was hashed), in log order. */
  errorLines: string[];
  /** Which readers recognised the log ("pytest", "tsc", ... or "generic" / "tail"). */
  tools: string[];
  /** 1-based line of the first failure finding in the log, or null when none was found. */
  firstErrorLine: number | null;
};

export type LogFindings = { lines: CleanLine[]; findings: Finding[]; tools: string[] };

/** Read a log once: cleaned lines plus every failure finding, in log order. */
export function analyseLog(log: string): LogFindings {
  const lines = splitLines(log).map((raw) => cleanLine(raw.length > MAX_EXTRACT_LINE ? raw.slice(0, MAX_EXTRACT_LINE) : raw));
  let findings = dedupe(EXTRACTORS.flatMap((extract) => extract(lines)));
  if (findings.length === 0) findings = genericFindings(lines);
  if (findings.length === 0) findings = tail(lines);
  findings.sort((a, b) => a.index - b.index);
  const tools = [...new Set(findings.map((f) => f.tool))].sort();
  return { lines, findings, tools };
}

/**
 * Compute the failure signature of a failed job's log. What is hashed: the signature version, the
 * job name without its matrix suffix, the sorted failing test names and the sorted first
 * `maxErrorLines` distinct error lines, each normalised by `normaliseForSignature`.
 */
export function failureSignature(log: string, options: FailureSignatureOptions = {}): FailureSignature {
  const { findings, tools } = analyseLog(log);
  const maxErrors = options.maxErrorLines ?? DEFAULT_MAX_ERROR_LINES;
  const failingTests = unique(findings.filter((f) => f.kind === "test").map((f) => normaliseForSignature(f.text)))
    .sort()
    .slice(0, MAX_TESTS);
  const errorLines = unique(
    findings.filter((f) => f.kind === "error").map((f) => normaliseForSignature(f.text)),
  ).slice(0, maxErrors);
  const job = options.jobName ? normaliseJobName(options.jobName) : null;
  const material = JSON.stringify({
    v: SIGNATURE_VERSION,
    job,
    tests: failingTests,
    errors: [...errorLines].sort(),
  });
  const first = findings[0];
  return {
    signature: createHash("sha256").update(material).digest("hex").slice(0, SIGNATURE_HEX_LENGTH),
    failingTests,
    errorLines,
    tools,
    firstErrorLine: first && first.tool !== "tail" ? first.index + 1 : null,
  };
}

/** 1-based line of the first failure in the log (what an excerpt should centre on), or null. */
export function locateFirstError(log: string): number | null {
  const first = analyseLog(log).findings[0];
  return first && first.tool !== "tail" ? first.index + 1 : null;
}

/** One reading per line and kind: the most specific extractor (earliest in EXTRACTORS) wins. */
function dedupe(findings: Finding[]): Finding[] {
  const seen = new Set<string>();
  const out: Finding[] = [];
  for (const f of findings) {
    if (f.text === "" || isBoilerplate(f.text)) continue;
    const key = `${f.index}:${f.kind}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(f);
  }
  return out;
}

/**
 * Nothing recognisable: the last few meaningful lines of the failed step are the best description
 * we have. Stops at the step's group marker, so the command echo and earlier steps stay out.
 */
function tail(lines: readonly CleanLine[]): Finding[] {
  const out: Finding[] = [];
  for (let i = lines.length - 1; i >= 0 && out.length < TAIL_LINES; i--) {
    if (lines[i]?.annotation === "group") break;
    const text = (lines[i]?.text ?? "").trim();
    if (text === "" || isBoilerplate(text) || /^(?:shell|env): /.test(text)) continue;
    out.push({ tool: "tail", kind: "error", text, index: i });
  }
  return out;
}

function unique(values: string[]): string[] {
  return [...new Set(values.filter((v) => v !== ""))];
}
