import type { Metadata } from "next";
import { StacksList } from "@/components/stacks/stacks-list";
import { HydrateClient, getQueryClient, trpc } from "@/server/trpc/server";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Agent stacks" };

export default async function StacksPage() {
  await getQueryClient().prefetchQuery(trpc.stacks.list.queryOptions());
  return (
    <HydrateClient>
      <StacksList />
    </HydrateClient>
  );
}
