import type { Metadata } from "next";
import { RunsList } from "@/components/runs/runs-list";
import { StoryPanel } from "@/components/runs/story-panel";
import { parseRunFilters, runListInput, suggestionsInput, withoutStatus } from "@/components/runs/filters";
import { HydrateClient, getQueryClient, trpc } from "@/server/trpc/server";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Runs" };

export default async function RunsPage({ searchParams }: { searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  const filters = parseRunFilters(await searchParams);
  const qc = getQueryClient();
  // The first page is rendered on the server; later pages load on demand.
  await Promise.all([
    qc.prefetchInfiniteQuery(trpc.runs.list.infiniteQueryOptions(runListInput(filters), { getNextPageParam: (last) => last.nextCursor })),
    qc.prefetchQuery(trpc.runs.counts.queryOptions(withoutStatus(filters))),
    qc.prefetchQuery(trpc.repositories.mine.queryOptions()),
    qc.prefetchQuery(trpc.runs.filterOptions.queryOptions()),
    filters.status === undefined ? qc.prefetchQuery(trpc.runs.list.queryOptions(suggestionsInput(filters))) : null,
  ]);
  return (
    <HydrateClient>
      <div className="mb-4">
        <StoryPanel />
      </div>
      <RunsList />
    </HydrateClient>
  );
}
