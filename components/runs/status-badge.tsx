import { Badge, type BadgeProps } from "@/components/ui/badge";
import type { RunStatus } from "@/server/db/generated/enums";

const tone: Record<RunStatus, NonNullable<BadgeProps["tone"]>> = {
  suggested: "info",
  queued: "neutral",
  running: "progress",
  awaiting_approval: "warning",
  succeeded: "success",
  failed: "danger",
  cancelled: "muted",
  escalated: "warning",
};

export const runStatusLabel: Record<RunStatus, string> = {
  suggested: "Suggested",
  queued: "Queued",
  running: "Running",
  awaiting_approval: "Awaiting approval",
  succeeded: "Succeeded",
  failed: "Failed",
  cancelled: "Cancelled",
  escalated: "Escalated",
};

export function RunStatusBadge({ status }: { status: RunStatus }) {
  return (
    <Badge tone={tone[status]} data-status={status}>
      {status === "running" && <span aria-hidden className="size-1.5 animate-pulse rounded-full bg-current" />}
      {runStatusLabel[status]}
    </Badge>
  );
}
