// Token shapes from a maintained set: the rules of secretlint's recommended preset
// (@secretlint/secretlint-rule-preset-recommend, MIT), run synchronously through the public rule
// API (`create(context).file(source)`, see @secretlint/types) so redaction stays a plain function.
// Updating the set is `npm install` of a newer preset; its id and version are in every report.
//
// Only scanner rules run. Filter rules are left out on purpose: secretlint-rule-filter-comments
// honours `secretlint-disable` comments, and the text scanned here is written by agents and
// strangers, who must not be able to switch masking off. Rules that only look at binary files
// or answer asynchronously find nothing here (text is all we scan).
import { rules } from "@secretlint/secretlint-rule-preset-recommend";
import presetPackage from "@secretlint/secretlint-rule-preset-recommend/package.json";

export const SECRETLINT_PRESET = { id: presetPackage.name, version: presetPackage.version } as const;

export type SecretlintHit = { start: number; end: number; rule: string };

type Rule = (typeof rules)[number];
type Handler = ReturnType<Rule["create"]>;

/** The rule's short name in reports and markers: "@secretlint/secretlint-rule-github" -> "github". */
export const shortRuleName = (id: string) => id.replace(/^@secretlint\/secretlint-rule-/, "");

// The comment filter calls itself a scanner; it only ever hides findings, so it is named here.
const FILTERS = new Set(["@secretlint/secretlint-rule-filter-comments"]);
const scanners = rules.filter(
  (r) => r.meta.type === "scanner" && !FILTERS.has(r.meta.id) && (r.meta.supportedContentTypes as string[]).some((t) => t === "text" || t === "all"),
);

export const SECRETLINT_RULES: readonly string[] = scanners.map((r) => shortRuleName(r.meta.id));

function sourceOf(content: string) {
  return {
    content,
    hasBOM: false,
    filePath: undefined,
    physicalFilePath: undefined,
    contentType: "text" as const,
    ext: "",
    getFilePath: () => undefined,
    getPhysicalFilePath: () => undefined,
    // Ranges are all we use; the location helpers are never needed by the text scanners.
    locationToRange: () => [0, 0] as const,
    rangeToLocation: () => ({ start: { line: 1, column: 0 }, end: { line: 1, column: 0 } }),
    positionToIndex: () => 0,
    indexToPosition: () => ({ line: 1, column: 0 }),
  };
}

/**
 * Where the preset's rules find a secret in `content`. A rule reports the matched value in its
 * message data; where that value sits inside or right after the reported range, the value's own
 * position is used (one rule reports the range of its whole match, prefix included, but the length
 * of the value alone), otherwise the range as reported.
 */
// Each rule's handler is made once: creating it (translators, option parsing) costs more than a
// scan. Reports go to whichever scan is running (scans are synchronous, so never two at once).
let sink: { content: string; hits: SecretlintHit[] } | null = null;
const handlers = scanners.flatMap((rule) => {
  const name = shortRuleName(rule.meta.id);
  const context = {
    sharedOptions: {},
    createTranslator: (messages: Record<string, { en: (props?: Record<string, unknown>) => string }>) => (messageId: string, props?: Record<string, unknown>) => ({
      message: messages[messageId]?.en(props) ?? messageId,
      messageId,
      data: props,
    }),
    report: (d: { range: readonly [number, number]; message: { data?: unknown } }) => sink?.hits.push(locate(sink.content, d.range, d.message.data, name)),
    ignore: () => undefined,
  };
  try {
    const handler: Handler = rule.create(context as never, {} as never);
    return handler.file ? [handler] : [];
  } catch {
    return [];
  }
});

export function secretlintHits(content: string): SecretlintHit[] {
  const hits: SecretlintHit[] = [];
  const source = sourceOf(content);
  sink = { content, hits };
  try {
    for (const handler of handlers) {
      try {
        const pending = handler.file?.(source as never);
        // An asynchronous rule (binary formats) would report after we return: never wait, never crash.
        if (pending && typeof (pending as Promise<void>).catch === "function") (pending as Promise<void>).catch(() => undefined);
      } catch {
        // A rule that throws on odd input must not stop the others (nor redaction).
      }
    }
  } finally {
    sink = null;
  }
  return hits;
}

function locate(content: string, range: readonly [number, number], data: unknown, rule: string): SecretlintHit {
  const [start, end] = range;
  const values = data && typeof data === "object" ? Object.values(data).filter((v): v is string => typeof v === "string" && v.length >= 8) : [];
  for (const value of values) {
    const at = content.indexOf(value, Math.max(0, start));
    if (at !== -1 && at < end + 256) return { start: at, end: at + value.length, rule };
  }
  return { start, end: Math.max(end, start + 1), rule };
}
