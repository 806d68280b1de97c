// Small display helpers shared by pages (pure, no React).

export function shortSha(sha: string | null | undefined) {
  return sha ? sha.slice(0, 7) : "—";
}

export function formatDuration(ms: number | null | undefined) {
  if (ms == null) return "—";
  if (ms < 1000) return `${ms} ms`;
  const s = Math.round(ms / 1000);
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m ${s % 60}s`;
  return `${Math.floor(m / 60)}h ${m % 60}m`;
}

const toMs = (d: Date | number | string) => (typeof d === "number" ? d : new Date(d).getTime());

/**
 * "just now", "5 min ago", "3 h ago", "2 d ago", "4 mo ago", "1 y ago", or "in 3 d" for a time
 * ahead. Each unit is rounded first and a value that rounds up to the next unit moves there, so
 * 59.5 minutes reads "1 h ago", never "60 min ago".
 */
export function formatRelative(date: Date | number | string, now: Date | number = Date.now()) {
  const diff = Math.round((toMs(now) - toMs(date)) / 1000);
  const abs = Math.abs(diff);
  if (abs < 45) return "just now";
  const [n, unit] = relativeUnit(abs);
  return diff > 0 ? `${n} ${unit} ago` : `in ${n} ${unit}`;
}

function relativeUnit(seconds: number): [number, string] {
  const minutes = Math.max(1, Math.round(seconds / 60));
  if (minutes < 60) return [minutes, "min"];
  const hours = Math.round(seconds / 3600);
  if (hours < 24) return [hours, "h"];
  const days = Math.round(seconds / 86_400);
  if (days < 45) return [days, "d"];
  const months = Math.round(days / 30.4375);
  if (months < 12) return [months, "mo"];
  return [Math.round(days / 365.25), "y"];
}

type ZoneOptions = { locale?: string; timeZone?: string };
const formatters = new Map<string, Intl.DateTimeFormat>();
function formatter(kind: "absolute" | "clock", { locale, timeZone }: ZoneOptions) {
  const key = `${kind} ${locale ?? ""} ${timeZone ?? ""}`;
  let f = formatters.get(key);
  if (!f) {
    f =
      kind === "absolute"
        ? new Intl.DateTimeFormat(locale, { dateStyle: "medium", timeStyle: "long", timeZone })
        : new Intl.DateTimeFormat("en-GB", { hour: "2-digit", minute: "2-digit", second: "2-digit", hourCycle: "h23", timeZone });
    formatters.set(key, f);
  }
  return f;
}

/** The date and time in the viewer's locale and time zone, with the zone: "Oct 8, 2026, 2:20:23 PM GMT+2". */
export function formatAbsolute(date: Date | number | string, opts: ZoneOptions = {}) {
  return formatter("absolute", opts).format(toMs(date));
}

/** The time of day, HH:MM:SS on a 24-hour clock, in the viewer's time zone. */
export function formatClock(date: Date | number | string, opts: Omit<ZoneOptions, "locale"> = {}) {
  return formatter("clock", opts).format(toMs(date));
}

export function formatUsd(n: number) {
  return n === 0 ? "$0" : n < 0.01 ? "<$0.01" : `$${n.toFixed(2)}`;
}

/**
 * A cost as shown: the dollars, or "unknown" with the models Airlock has no price for (what is
 * known so far follows as "at least"). Never a silent $0.
 */
export function formatCost(usd: number, unknown: string | null | undefined) {
  if (!unknown) return formatUsd(usd);
  return `unknown (no price for ${unknown}${usd > 0 ? `; at least ${formatUsd(usd)}` : ""})`;
}

export const taskKindLabel: Record<string, string> = {
  diagnose: "Diagnose",
  repair: "Repair",
  triage: "Triage",
  release_review: "Release review",
};

/**
 * Where an attempt ran, for a reader: a worker's `host/pid/pool-id` reference reads "worker
 * process 3417 on vm", a Kubernetes `namespace/job/name` reads "Job name in namespace ns".
 */
export function describeRunnerRef(ref: string | null | undefined, poolKind: string | null | undefined): string {
  if (!ref) return "—";
  const parts = ref.split("/");
  if (poolKind === "kubernetes" && parts.length === 3 && parts[1] === "job") return `Job ${parts[2]} in namespace ${parts[0]}`;
  const [host, pid] = parts;
  const number = pid?.replace(/^pid-/, "");
  if (host && number && /^\d+$/.test(number)) return `worker process ${number} on ${host}`;
  return ref;
}
