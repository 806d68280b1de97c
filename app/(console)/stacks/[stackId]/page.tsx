import type { Metadata } from "next";
import { StackEditor } from "@/components/stacks/stack-editor";
import { HydrateClient, getQueryClient, trpc } from "@/server/trpc/server";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Agent stack" };

export default async function StackPage({ params }: { params: Promise<{ stackId: string }> }) {
  const { stackId } = await params;
  const qc = getQueryClient();
  await Promise.all([qc.prefetchQuery(trpc.stacks.byId.queryOptions({ stackId })), qc.prefetchQuery(trpc.repositories.mine.queryOptions())]);
  return (
    <HydrateClient>
      <StackEditor stackId={stackId} />
    </HydrateClient>
  );
}
