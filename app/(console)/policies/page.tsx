import type { Metadata } from "next";
import { PoliciesList } from "@/components/policies/policies-list";
import { HydrateClient, getQueryClient, trpc } from "@/server/trpc/server";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Policies" };

export default async function PoliciesPage() {
  await getQueryClient().prefetchQuery(trpc.policies.list.queryOptions());
  return (
    <HydrateClient>
      <PoliciesList />
    </HydrateClient>
  );
}
