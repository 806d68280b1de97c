// Context assembly: bounded log excerpts, redaction, the context bundle with its canonical JSON
// and digest, and prompt rendering with its hash. Pure: callers load the records and store the
// result.
export * from "./schemas";
export { buildLogExcerpt, EXCERPT_DEFAULTS, type LogExcerpt, type LogExcerptOptions } from "./log-excerpt";
export {
  CLEAN_REPORT,
  MIN_SECRET_LENGTH,
  mergeReports,
  redactDeep,
  redactText,
  reportFromMarkers,
  type KnownSecret,
  type RedactOptions,
} from "./redaction/redact";
export {
  DEFAULT_OUTPUT_FORMATS,
  buildContextBundle,
  deriveStackTrace,
  extractFilePaths,
  type BuildContextOptions,
  type BuiltContext,
  type ContextBundleInput,
  type RawLog,
} from "./build-context-bundle";
export { canonicalJson, contentDigest, digestOf, sha256 } from "@/server/lib/digest";
export { promptHash, renderPrompt, type RenderedPrompt } from "./prompt";
