"use client";

import { useQuery } from "@tanstack/react-query";
import Link from "next/link";
import { useTRPC } from "@/components/providers/trpc";
import { ActionButton } from "@/components/ui/action-button";
import { formatRelative } from "@/components/ui/format";
import { suggestionsInput, type RunFilters } from "./filters";

// Suggestions a failed check created (runs in `suggested`): a person decides
// whether an agent diagnoses or repairs. Dispatching belongs to run execution,
// which has no mutation yet, so the actions say so instead of pretending.

const notYet = "Not available yet";
const why = "Dispatching a suggestion arrives with run execution.";

export function Suggestions({ filters }: { filters: RunFilters }) {
  const trpc = useTRPC();
  const suggestions = useQuery(trpc.runs.list.queryOptions(suggestionsInput(filters)));
  const items = suggestions.data?.items ?? [];
  if (items.length === 0) return null;
  return (
    <section aria-labelledby="suggestions-heading" className="rounded-lg border border-sky-200 bg-sky-50/60 p-3 dark:border-sky-900 dark:bg-sky-950/30">
      <h2 id="suggestions-heading" className="mb-2 text-sm font-semibold">
        Suggested by failed checks <span className="font-normal text-zinc-600 dark:text-zinc-400">({items.length}{suggestions.data?.nextCursor ? "+" : ""})</span>
      </h2>
      <ul className="divide-y divide-sky-100 dark:divide-sky-900/60" data-testid="suggestions">
        {items.map((s) => (
          <li key={s.id} className="flex flex-wrap items-center gap-3 py-2 text-sm">
            <div className="min-w-0 flex-1">
              <Link href={`/runs/${s.id}`} className="font-medium hover:underline">
                <span className="mr-1.5 font-mono text-xs text-zinc-600 dark:text-zinc-400">#{s.number}</span>
                {s.title}
              </Link>
              <div className="text-xs text-zinc-600 dark:text-zinc-400" suppressHydrationWarning>
                {s.repository.fullName}
                {s.pullRequest && ` · PR #${s.pullRequest.number}`} · {formatRelative(s.createdAt)}
              </div>
            </div>
            <ActionButton size="sm" disabledReason={notYet} detail={why}>
              Diagnose with agent
            </ActionButton>
            <ActionButton size="sm" disabledReason={notYet} detail={why}>
              Attempt repair
            </ActionButton>
          </li>
        ))}
      </ul>
    </section>
  );
}
