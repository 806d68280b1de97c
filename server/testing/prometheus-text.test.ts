import { Histogram, Registry, Summary, Counter } from "prom-client";
import { describe, expect, it } from "vitest";
import { parsePrometheusText, parseSample } from "./prometheus-text";

describe("parsePrometheusText", () => {
  it("keeps each labelled histogram series with its buckets, _sum and _count (le written first, as prom-client does)", async () => {
    const registry = new Registry();
    const h = new Histogram({ name: "x_seconds", help: "h", labelNames: ["kind"], buckets: [1, 2], registers: [registry] });
    h.observe({ kind: "a" }, 1.5);
    h.observe({ kind: "b" }, 0.5);
    h.observe({ kind: "b" }, 3);
    const [family] = parsePrometheusText(await registry.metrics());
    expect(family).toEqual({
      name: "x_seconds",
      help: "h",
      type: "histogram",
      series: [
        { labels: { kind: "a" }, buckets: { "1": 0, "2": 1, "+Inf": 1 }, sum: 1.5, count: 1 },
        { labels: { kind: "b" }, buckets: { "1": 1, "2": 1, "+Inf": 2 }, sum: 3.5, count: 2 },
      ],
    });
  });

  it("reads summaries, counters, escaped label values and HELP text, timestamps and special values", async () => {
    const registry = new Registry();
    const s = new Summary({ name: "lat", help: "a\\b\nc", labelNames: ["route"], percentiles: [0.5], registers: [registry] });
    s.observe({ route: 'say "hi"\\\n' }, 4);
    new Counter({ name: "n_total", help: "n", registers: [registry] }).inc(3);
    const text = `${await registry.metrics()}\n# a comment\nloose{a="1"} +Inf 1700000000000\nloose{a="2"} NaN\nloose{a="3"} Nan\nloose{a="4"} -inf\n`;
    const families = parsePrometheusText(text);
    const lat = families.find((f) => f.name === "lat");
    expect(lat).toEqual({ name: "lat", help: "a\\b\nc", type: "summary", series: [{ labels: { route: 'say "hi"\\\n' }, quantiles: { "0.5": 4 }, sum: 4, count: 1 }] });
    expect(families.find((f) => f.name === "n_total")).toEqual({ name: "n_total", help: "n", type: "counter", series: [{ labels: {}, value: 3 }] });
    const loose = families.find((f) => f.name === "loose");
    expect(loose?.type).toBe("untyped");
    expect(loose?.type === "untyped" && loose.series.map((x) => x.value)).toEqual([Infinity, NaN, NaN, -Infinity]);
    expect(parseSample('loose{a="1"} 2 1700000000000').timestampMs).toBe(1_700_000_000_000);
  });

  it("refuses what is not the format: an unterminated label value, a bad escape, a missing value, an unknown type", () => {
    expect(() => parsePrometheusText('m{a="x} 1')).toThrow(/unterminated/);
    expect(() => parsePrometheusText('m{a="\\x"} 1')).toThrow(/bad escape/);
    expect(() => parsePrometheusText("m{a=\"x\"}")).toThrow(/value/);
    expect(() => parsePrometheusText("m one")).toThrow(/not a number/);
    expect(() => parsePrometheusText("# TYPE m gaugeish\n")).toThrow(/unknown type/);
    expect(() => parsePrometheusText("m 1\n# TYPE m counter\n")).toThrow(/after its samples/);
  });
});
