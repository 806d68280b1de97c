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

export function formatRelative(date: Date, now: Date = new Date()) {
  const diff = Math.round((now.getTime() - date.getTime()) / 1000);
  if (diff < 45) return "just now";
  if (diff < 3600) return `${Math.round(diff / 60)} min ago`;
  if (diff < 86_400) return `${Math.round(diff / 3600)} h ago`;
  return `${Math.round(diff / 86_400)} d ago`;
}

export function formatUsd(n: number) {
  return n === 0 ? "$0" : n < 0.01 ? "<$0.01" : `$${n.toFixed(2)}`;
}

export const taskKindLabel: Record<string, string> = {
  diagnose: "Diagnose",
  repair: "Repair",
  triage: "Triage",
  release_review: "Release review",
};
