import { createLoader, parseAsStringLiteral } from "nuqs/server";

// The /metrics range in the URL (?range=24h|7d|30d), so a view can be linked and reloaded.

export const metricsRanges = { "24h": 24, "7d": 24 * 7, "30d": 24 * 30 } as const;
export type MetricsRange = keyof typeof metricsRanges;

export const metricsRangeParsers = { range: parseAsStringLiteral(Object.keys(metricsRanges) as MetricsRange[]).withDefault("7d") };
export const loadMetricsRange = createLoader(metricsRangeParsers);
