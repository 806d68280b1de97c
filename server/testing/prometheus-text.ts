// A parser of Prometheus' text exposition format (0.0.4), for tests that read a scrape.
// parse-prometheus-text-format 1.1.1 was dropped: on a labelled histogram whose `le` is not the
// last label (prom-client writes it first) it merges every series into one and loses `_sum` and
// `_count`. This one follows the format's grammar: HELP and TYPE lines, samples with escaped
// label values, an optional timestamp, and histogram/summary series grouped by their labels
// without `le`/`quantile`.

export type Labels = Record<string, string>;
export type MetricType = "counter" | "gauge" | "histogram" | "summary" | "untyped";
export type Sample = { name: string; labels: Labels; value: number; timestampMs?: number };
export type Series = { labels: Labels; value: number };
export type HistogramSeries = { labels: Labels; buckets: Record<string, number>; sum: number | undefined; count: number | undefined };
export type SummarySeries = { labels: Labels; quantiles: Record<string, number>; sum: number | undefined; count: number | undefined };
export type MetricFamily =
  | { name: string; help: string; type: "counter" | "gauge" | "untyped"; series: Series[] }
  | { name: string; help: string; type: "histogram"; series: HistogramSeries[] }
  | { name: string; help: string; type: "summary"; series: SummarySeries[] };

const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*/;
const TYPES = new Set<MetricType>(["counter", "gauge", "histogram", "summary", "untyped"]);

class ParseError extends Error {
  constructor(line: number, message: string) {
    super(`line ${line}: ${message}`);
  }
}

// Prometheus reads values with Go's strconv.ParseFloat, which takes NaN and Inf in any case
// ("Nan" is what prom-client writes for a NaN gauge).
function parseNumber(text: string, line: number): number {
  if (/^\+?inf(inity)?$/i.test(text)) return Infinity;
  if (/^-inf(inity)?$/i.test(text)) return -Infinity;
  if (/^nan$/i.test(text)) return NaN;
  const n = Number(text);
  if (text === "" || Number.isNaN(n)) throw new ParseError(line, `not a number: ${JSON.stringify(text)}`);
  return n;
}

function unescapeHelp(text: string): string {
  return text.replace(/\\(\\|n)/g, (_, c: string) => (c === "n" ? "\n" : "\\"));
}

/** One sample line: `name{a="x",b="y"} value [timestamp]`. */
export function parseSample(text: string, line = 0): Sample {
  const nameMatch = METRIC_NAME.exec(text);
  if (!nameMatch) throw new ParseError(line, "a sample must start with a metric name");
  const name = nameMatch[0];
  let i = name.length;
  const labels: Labels = {};
  if (text[i] === "{") {
    i++;
    for (;;) {
      while (text[i] === " ") i++;
      if (text[i] === "}") {
        i++;
        break;
      }
      const labelMatch = LABEL_NAME.exec(text.slice(i));
      if (!labelMatch) throw new ParseError(line, `bad label name at column ${i}`);
      const label = labelMatch[0];
      i += label.length;
      if (text[i] !== "=" || text[i + 1] !== '"') throw new ParseError(line, `expected =" after label ${label}`);
      i += 2;
      let value = "";
      for (;;) {
        const c = text[i];
        if (c === undefined) throw new ParseError(line, `unterminated value of label ${label}`);
        i++;
        if (c === '"') break;
        if (c === "\\") {
          const e = text[i++];
          if (e === "n") value += "\n";
          else if (e === "\\" || e === '"') value += e;
          else throw new ParseError(line, `bad escape \\${e ?? ""} in label ${label}`);
        } else value += c;
      }
      if (label in labels) throw new ParseError(line, `label ${label} twice`);
      labels[label] = value;
      while (text[i] === " ") i++;
      if (text[i] === ",") i++;
      else if (text[i] !== "}") throw new ParseError(line, `expected , or } after label ${label}`);
    }
  }
  const rest = text.slice(i).trim().split(/[ \t]+/);
  if (rest.length < 1 || rest.length > 2 || rest[0] === "") throw new ParseError(line, "expected a value and an optional timestamp");
  const sample: Sample = { name, labels, value: parseNumber(rest[0]!, line) };
  if (rest[1] !== undefined) sample.timestampMs = parseNumber(rest[1], line);
  return sample;
}

const seriesKey = (labels: Labels) =>
  JSON.stringify(
    Object.entries(labels)
      .filter(([k]) => k !== "le" && k !== "quantile")
      .sort(([a], [b]) => (a < b ? -1 : 1)),
  );
const without = (labels: Labels, key: string): Labels => Object.fromEntries(Object.entries(labels).filter(([k]) => k !== key));

type Declared = { name: string; help: string; type: MetricType; samples: Sample[] };

/** The family a sample belongs to: its own name, or a histogram/summary's name before _bucket/_sum/_count. */
function familyOf(sampleName: string, declared: Map<string, Declared>): Declared | undefined {
  const own = declared.get(sampleName);
  if (own) return own;
  for (const suffix of ["_bucket", "_sum", "_count"]) {
    if (!sampleName.endsWith(suffix)) continue;
    const base = declared.get(sampleName.slice(0, -suffix.length));
    if (base && (base.type === "histogram" || (base.type === "summary" && suffix !== "_bucket"))) return base;
  }
  return undefined;
}

function toFamily(d: Declared): MetricFamily {
  if (d.type === "histogram" || d.type === "summary") {
    const byKey = new Map<string, HistogramSeries & SummarySeries>();
    for (const s of d.samples) {
      const key = seriesKey(s.labels);
      let series = byKey.get(key);
      if (!series) {
        series = { labels: without(without(s.labels, "le"), "quantile"), buckets: {}, quantiles: {}, sum: undefined, count: undefined };
        byKey.set(key, series);
      }
      if (s.name === `${d.name}_sum`) series.sum = s.value;
      else if (s.name === `${d.name}_count`) series.count = s.value;
      else if (d.type === "histogram" && s.name === `${d.name}_bucket` && s.labels.le !== undefined) series.buckets[s.labels.le] = s.value;
      else if (d.type === "summary" && s.name === d.name && s.labels.quantile !== undefined) series.quantiles[s.labels.quantile] = s.value;
      else throw new Error(`sample ${s.name} does not fit ${d.type} ${d.name}`);
    }
    const all = [...byKey.values()];
    if (d.type === "histogram") return { name: d.name, help: d.help, type: "histogram", series: all.map(({ labels, buckets, sum, count }) => ({ labels, buckets, sum, count })) };
    return { name: d.name, help: d.help, type: "summary", series: all.map(({ labels, quantiles, sum, count }) => ({ labels, quantiles, sum, count })) };
  }
  return { name: d.name, help: d.help, type: d.type, series: d.samples.map((s) => ({ labels: s.labels, value: s.value })) };
}

/** Parses a whole scrape into its metric families, in the order they are declared or first seen. */
export function parsePrometheusText(text: string): MetricFamily[] {
  const declared = new Map<string, Declared>();
  const declare = (name: string) => {
    let d = declared.get(name);
    if (!d) {
      d = { name, help: "", type: "untyped", samples: [] };
      declared.set(name, d);
    }
    return d;
  };
  text.split("\n").forEach((raw, index) => {
    const lineNo = index + 1;
    const line = raw.replace(/\r$/, "");
    if (line.trim() === "") return;
    if (line.startsWith("#")) {
      const m = /^#[ \t]+(HELP|TYPE)[ \t]+([a-zA-Z_:][a-zA-Z0-9_:]*)(?:[ \t]+(.*))?$/.exec(line);
      if (!m) return; // an ordinary comment
      const d = declare(m[2]!);
      if (m[1] === "HELP") d.help = unescapeHelp(m[3] ?? "");
      else {
        const type = (m[3] ?? "").trim() as MetricType;
        if (!TYPES.has(type)) throw new ParseError(lineNo, `unknown type ${JSON.stringify(type)}`);
        if (d.samples.length > 0) throw new ParseError(lineNo, `TYPE of ${d.name} after its samples`);
        d.type = type;
      }
      return;
    }
    const sample = parseSample(line, lineNo);
    (familyOf(sample.name, declared) ?? declare(sample.name)).samples.push(sample);
  });
  return [...declared.values()].map(toFamily);
}
