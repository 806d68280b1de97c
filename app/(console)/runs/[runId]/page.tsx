import type { Metadata } from "next";
import { RunView } from "@/components/runs/run-view";
import { initialEventsInput } from "@/components/transcript/window";
import { HydrateClient, getQueryClient, notFoundIfMissing, trpc } from "@/server/trpc/server";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Run" };

export default async function RunPage({ params }: { params: Promise<{ runId: string }> }) {
  const { runId } = await params;
  const qc = getQueryClient();
  // The run and its newest window of events; older events page in on scroll.
  const run = trpc.runs.byId.queryOptions({ runId });
  await Promise.all([qc.prefetchQuery(run), qc.prefetchQuery(trpc.runs.events.queryOptions(initialEventsInput(runId)))]);
  notFoundIfMissing(run.queryKey);
  return (
    <HydrateClient>
      <RunView runId={runId} />
    </HydrateClient>
  );
}
