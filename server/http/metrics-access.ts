import { timingSafeEqual } from "node:crypto";

// Who may scrape GET /api/metrics. Its figures (run counts per status, queue waits, costs, pool
// use, repository names in labels) are not for strangers: with AIRLOCK_METRICS_TOKEN set, a
// scrape needs `Authorization: Bearer <token>`; without one, only development and tests answer
// (production says how to turn it on). `npm start` generates a token (.airlock/metrics-token).

export type MetricsAccess = { ok: true } | { ok: false; status: 401 | 403; message: string };

export function metricsAccess(opts: { token: string | undefined; nodeEnv: string; authorization: string | null }): MetricsAccess {
  if (!opts.token) {
    if (opts.nodeEnv !== "production") return { ok: true };
    return {
      ok: false,
      status: 403,
      message: "Metrics are off: set AIRLOCK_METRICS_TOKEN (npm start keeps one in .airlock/metrics-token) and scrape with Authorization: Bearer <token>.",
    };
  }
  const given = /^Bearer\s+(.+)$/i.exec(opts.authorization ?? "")?.[1]?.trim() ?? "";
  const a = Buffer.from(given);
  const b = Buffer.from(opts.token);
  if (a.length === b.length && timingSafeEqual(a, b)) return { ok: true };
  return { ok: false, status: 401, message: given ? "Wrong metrics token." : "Send Authorization: Bearer <AIRLOCK_METRICS_TOKEN>." };
}
