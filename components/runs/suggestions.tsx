"use client";

import { useMutation, useQueries, useQuery, useQueryClient } from "@tanstack/react-query";
import Link from "next/link";
import { toast } from "sonner";
import { useTRPC } from "@/components/providers/trpc";
import { ActionButton } from "@/components/ui/action-button";
import { Card } from "@/components/ui/card";
import { RelativeTime } from "@/components/ui/time";
import { suggestionsInput, type RunFilters } from "./filters";

// Suggestions a failed check created (runs in `suggested`): a person decides
// whether an agent runs (runs.dispatch, maintainers only). "Diagnose with agent" and
// "Attempt repair" dispatch it as that task: as it was suggested when the kinds agree,
// otherwise with the repository's stack for the task (its manual trigger rule); with no
// such stack, the button says why.

type ButtonTask = "diagnose" | "repair";

export function Suggestions({ filters }: { filters: RunFilters }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const suggestions = useQuery(trpc.runs.list.queryOptions(suggestionsInput(filters)));
  const dispatch = useMutation(
    trpc.runs.dispatch.mutationOptions({
      onSuccess: async (res) => {
        toast.success(`Dispatched as a ${res.taskKind.replace("_", " ")} run: the first attempt is queued`);
        await Promise.all([
          queryClient.invalidateQueries({ queryKey: trpc.runs.list.queryKey() }),
          queryClient.invalidateQueries({ queryKey: trpc.runs.list.infiniteQueryKey() }),
          queryClient.invalidateQueries({ queryKey: trpc.runs.counts.queryKey() }),
        ]);
      },
      onError: (err) => toast.error(err.message),
    }),
  );
  const items = suggestions.data?.items ?? [];
  const repositoryIds = [...new Set(items.map((s) => s.repository.id))];
  const options = useQueries({ queries: repositoryIds.map((repositoryId) => trpc.runs.dispatchOptions.queryOptions({ repositoryId })) });
  if (items.length === 0) return null;
  const optionsOf = (repositoryId: string) => options[repositoryIds.indexOf(repositoryId)]?.data;
  /** Why this button cannot dispatch the suggestion as `task`, or null. */
  const refusalFor = (s: (typeof items)[number], task: ButtonTask): string | null => {
    const o = optionsOf(s.repository.id);
    if (!o) return "Loading…";
    if (o.refusal) return o.refusal;
    if (s.taskKind !== task) {
      const stack = o.taskStacks.find((t) => t.taskKind === task);
      if (!stack || stack.reason !== null) return stack?.reason ?? `No ${task} stack`;
    }
    return dispatch.isPending && dispatch.variables?.runId === s.id ? "Dispatching…" : null;
  };
  /** What the button will run, for its title: the suggestion's own stack, or the task's. */
  const stackFor = (s: (typeof items)[number], task: ButtonTask): string | undefined => {
    if (s.taskKind === task) return undefined;
    const stack = optionsOf(s.repository.id)?.taskStacks.find((t) => t.taskKind === task)?.stack;
    return stack ? `Runs as a ${task} task with stack ${stack.name}` : undefined;
  };
  return (
    <Card as="section" tone="info" padding="sm" aria-labelledby="suggestions-heading">
      <h2 id="suggestions-heading" className="mb-2 text-sm font-semibold">
        Suggested by failed checks <span className="font-normal text-zinc-600 dark:text-zinc-400">({items.length}{suggestions.data?.nextCursor ? "+" : ""})</span>
      </h2>
      <ul className="divide-y divide-sky-100 dark:divide-sky-900/60" data-testid="suggestions">
        {items.map((s) => {
          return (
            <li key={s.id} className="flex flex-wrap items-center gap-3 py-2 text-sm">
              <div className="min-w-0 flex-1">
                <Link href={`/runs/${s.id}`} className="font-medium hover:underline">
                  <span className="mr-1.5 font-mono text-xs text-zinc-600 dark:text-zinc-400">#{s.number}</span>
                  {s.title}
                </Link>
                <div className="text-xs text-zinc-600 dark:text-zinc-400">
                  {s.repository.fullName}
                  {s.pullRequest && ` · PR #${s.pullRequest.number}`} · <RelativeTime date={s.createdAt} />
                </div>
              </div>
              <ActionButton size="sm" title={stackFor(s, "diagnose")} disabledReason={refusalFor(s, "diagnose")} onClick={() => dispatch.mutate({ runId: s.id, taskKind: "diagnose" })}>
                Diagnose with agent
              </ActionButton>
              <ActionButton size="sm" title={stackFor(s, "repair")} disabledReason={refusalFor(s, "repair")} onClick={() => dispatch.mutate({ runId: s.id, taskKind: "repair" })}>
                Attempt repair
              </ActionButton>
            </li>
          );
        })}
      </ul>
    </Card>
  );
}
