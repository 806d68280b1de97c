import type { Metadata } from "next";
import { StackEditor } from "@/components/stacks/stack-editor";
import { HydrateClient, getQueryClient, notFoundIfMissing, trpc } from "@/server/trpc/server";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Agent stack" };

export default async function StackPage({ params }: { params: Promise<{ stackId: string }> }) {
  const { stackId } = await params;
  const qc = getQueryClient();
  const stack = trpc.stacks.byId.queryOptions({ stackId });
  await Promise.all([qc.prefetchQuery(stack), qc.prefetchQuery(trpc.repositories.mine.queryOptions())]);
  notFoundIfMissing(stack.queryKey);
  return (
    <HydrateClient>
      <StackEditor stackId={stackId} />
    </HydrateClient>
  );
}
