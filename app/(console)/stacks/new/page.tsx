import type { Metadata } from "next";
import { StackEditor } from "@/components/stacks/stack-editor";
import { HydrateClient, getQueryClient, trpc } from "@/server/trpc/server";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "New stack" };

export default async function NewStackPage({ searchParams }: { searchParams: Promise<{ clone?: string | string[] }> }) {
  const raw = (await searchParams).clone;
  const cloneId = typeof raw === "string" && raw !== "" ? raw : null;
  const qc = getQueryClient();
  await Promise.all([
    qc.prefetchQuery(trpc.stacks.list.queryOptions()),
    qc.prefetchQuery(trpc.repositories.mine.queryOptions()),
    cloneId ? qc.prefetchQuery(trpc.stacks.byId.queryOptions({ stackId: cloneId })) : null,
  ]);
  return (
    <HydrateClient>
      <StackEditor stackId={null} cloneId={cloneId} />
    </HydrateClient>
  );
}
