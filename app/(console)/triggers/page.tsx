import type { Metadata } from "next";
import { RulesList } from "@/components/triggers/rules-list";
import { HydrateClient, getQueryClient, trpc } from "@/server/trpc/server";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Trigger rules" };

export default async function TriggersPage() {
  await getQueryClient().prefetchQuery(trpc.triggers.list.queryOptions());
  return (
    <HydrateClient>
      <RulesList />
    </HydrateClient>
  );
}
