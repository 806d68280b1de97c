"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import Link from "next/link";
import { toast } from "sonner";
import { useTRPC } from "@/components/providers/trpc";
import { ActionButton } from "@/components/ui/action-button";
import { Card } from "@/components/ui/card";
import { RelativeTime } from "@/components/ui/time";
import { suggestionsInput, type RunFilters } from "./filters";

// Suggestions a failed check created (runs in `suggested`): a person decides
// whether an agent runs. Dispatching queues the suggestion as it was suggested
// (runs.dispatch, maintainers only); turning a diagnosis into a repair (or back)
// has no mutation, so that action says so.

const repairKinds = new Set(["repair"]);

export function Suggestions({ filters }: { filters: RunFilters }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const suggestions = useQuery(trpc.runs.list.queryOptions(suggestionsInput(filters)));
  const repos = useQuery(trpc.repositories.mine.queryOptions());
  const dispatch = useMutation(
    trpc.runs.dispatch.mutationOptions({
      onSuccess: async () => {
        toast.success("Dispatched: the first attempt is queued");
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
  if (items.length === 0) return null;
  const roleOn = (repositoryId: string) => repos.data?.find((r) => r.id === repositoryId)?.role ?? "viewer";
  return (
    <Card as="section" tone="info" padding="sm" aria-labelledby="suggestions-heading">
      <h2 id="suggestions-heading" className="mb-2 text-sm font-semibold">
        Suggested by failed checks <span className="font-normal text-zinc-600 dark:text-zinc-400">({items.length}{suggestions.data?.nextCursor ? "+" : ""})</span>
      </h2>
      <ul className="divide-y divide-sky-100 dark:divide-sky-900/60" data-testid="suggestions">
        {items.map((s) => {
          const role = roleOn(s.repository.id);
          const roleReason = role === "viewer" ? "This needs the maintainer role on the repository; you are viewer" : null;
          const isRepair = repairKinds.has(s.taskKind);
          const otherKind = `Not available yet: this suggestion is a ${s.taskKind.replace("_", " ")} run, and changing its task has no action yet`;
          const busy = dispatch.isPending && dispatch.variables?.runId === s.id ? "Dispatching…" : null;
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
              <ActionButton size="sm" disabledReason={isRepair ? otherKind : (roleReason ?? busy)} onClick={() => dispatch.mutate({ runId: s.id })}>
                Diagnose with agent
              </ActionButton>
              <ActionButton size="sm" disabledReason={isRepair ? (roleReason ?? busy) : otherKind} onClick={() => dispatch.mutate({ runId: s.id })}>
                Attempt repair
              </ActionButton>
            </li>
          );
        })}
      </ul>
    </Card>
  );
}
