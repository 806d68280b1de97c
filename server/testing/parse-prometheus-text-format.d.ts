// Types for parse-prometheus-text-format (the package ships none): the families of a scrape.
declare module "parse-prometheus-text-format" {
  type Labels = Record<string, string>;
  export type MetricFamily =
    | { name: string; help: string; type: "COUNTER" | "GAUGE" | "UNTYPED"; metrics: { value: string; labels?: Labels }[] }
    | { name: string; help: string; type: "HISTOGRAM"; metrics: { buckets: Record<string, string>; count: string; sum: string; labels?: Labels }[] }
    | { name: string; help: string; type: "SUMMARY"; metrics: { quantiles: Record<string, string>; count: string; sum: string; labels?: Labels }[] };
  export default function parsePrometheusTextFormat(text: string): MetricFamily[];
}
