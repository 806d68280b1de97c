import type { Metadata } from "next";
import { RepositoriesSettings } from "@/components/settings/repositories-settings";
import { HydrateClient, getQueryClient, trpc } from "@/server/trpc/server";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Repositories" };

export default async function RepositoriesSettingsPage() {
  await Promise.all([getQueryClient().prefetchQuery(trpc.repositorySettings.list.queryOptions()), getQueryClient().prefetchQuery(trpc.users.me.queryOptions())]);
  return (
    <HydrateClient>
      <RepositoriesSettings />
    </HydrateClient>
  );
}
