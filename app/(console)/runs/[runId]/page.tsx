import type { Metadata } from "next";
import { RunView } from "@/components/runs/run-view";
import { initialEventsInput } from "@/components/transcript/window";
import { HydrateClient, getQueryClient, trpc } from "@/server/trpc/server";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Run" };

export default async function RunPage({ params }: { params: Promise<{ runId: string }> }) {
  const { runId } = await params;
  const qc = getQueryClient();
  // The run and its newest window of events; older events page in on scroll.
  await Promise.all([qc.prefetchQuery(trpc.runs.byId.queryOptions({ runId })), qc.prefetchQuery(trpc.runs.events.queryOptions(initialEventsInput(runId)))]);
  return (
    <HydrateClient>
      <RunView runId={runId} />
    </HydrateClient>
  );
}
