import { Badge } from "@/components/ui/badge";
import type { CodeOrigin } from "@/server/db/generated/enums";

// Where the run's code comes from, and why Airlock thinks so (evaluation/origin.ts). Anything but
// the repository's own code runs on an untrusted pool with no secrets; the reason is the title.

const shown: Record<CodeOrigin, { label: string; tone: "muted" | "warning" }> = {
  repository: { label: "repository code", tone: "muted" },
  fork: { label: "fork PR", tone: "warning" },
  unknown: { label: "unknown origin", tone: "warning" },
};

export function OriginBadge({ run }: { run: { isFork: boolean; origin: CodeOrigin | null; originReason: string | null } }) {
  // Runs from before origins were recorded carry isFork alone.
  const origin = run.origin ?? (run.isFork ? null : "repository");
  if (origin === null) return <Badge tone="warning" data-testid="run-origin">fork PR or unknown origin</Badge>;
  const { label, tone } = shown[origin];
  const why = run.originReason ?? (origin === "repository" ? "recorded as not a fork" : "recorded as a fork");
  const trust = origin === "repository" ? "trusted as the repository's trust tier says" : "untrusted: an untrusted pool, no secrets";
  return (
    <Badge tone={tone} title={`${why} (${trust})`} data-testid="run-origin" data-origin={origin}>
      {label}
      <span className="sr-only">: {why}</span>
    </Badge>
  );
}
