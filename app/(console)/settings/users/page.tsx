import type { Metadata } from "next";
import { UsersSettings } from "@/components/settings/users-settings";
import { HydrateClient, getQueryClient, trpc } from "@/server/trpc/server";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "People" };

export default async function UsersPage() {
  const qc = getQueryClient();
  await Promise.all([
    qc.prefetchQuery(trpc.users.list.queryOptions()),
    qc.prefetchQuery(trpc.users.invitations.queryOptions()),
    qc.prefetchQuery(trpc.repositorySettings.list.queryOptions()),
  ]);
  return (
    <HydrateClient>
      <UsersSettings />
    </HydrateClient>
  );
}
