import { Badge } from "@/components/ui/badge";
import { formatRelative } from "@/components/ui/format";
import { Section } from "./section";
import type { RunDetailView } from "./types";

// Triggers the live path dropped in this run's favour: a duplicate (a redelivery, another report
// of the same failure) or a rule another rule took precedence over, each with its delivery.
// Shown only when there are some; reasons are rendered as text.

export function DroppedTriggers({ run }: { run: RunDetailView }) {
  const { total, items } = run.droppedTriggers;
  if (total === 0) return null;
  const duplicates = run.duplicateTriggersDropped;
  return (
    <Section title="Triggers dropped" id="dropped-triggers">
      <p className="mb-2 text-sm" data-testid="dropped-triggers-summary">
        {duplicates} duplicate trigger{duplicates === 1 ? "" : "s"} dropped
        {total > duplicates ? `, ${total - duplicates} superseded by this run's rule` : ""}
        {total > items.length ? ` (newest ${items.length} shown)` : ""}
      </p>
      <ul className="space-y-2 text-xs">
        {items.map((d) => (
          <li key={d.id} data-kind={d.kind} className="border-t border-zinc-100 pt-2 first:border-0 first:pt-0 dark:border-zinc-800">
            <div className="flex flex-wrap items-center gap-1">
              <Badge tone={d.kind === "duplicate" ? "muted" : "warning"}>{d.kind === "duplicate" ? "duplicate" : "superseded"}</Badge>
              <span className="text-zinc-600 dark:text-zinc-400">{formatRelative(d.at)}</span>
            </div>
            <p className="mt-1 break-words">{d.reason}</p>
            <p className="mt-1 break-all text-zinc-600 dark:text-zinc-400">
              delivery <code className="font-mono">{d.deliveryId ?? "none"}</code>
              {d.delivery && ` · ${d.delivery.source} ${d.delivery.event}${d.delivery.action ? `.${d.delivery.action}` : ""}, received ${formatRelative(d.delivery.receivedAt)}`}
            </p>
          </li>
        ))}
      </ul>
    </Section>
  );
}
