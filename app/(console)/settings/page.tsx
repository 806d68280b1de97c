import type { Metadata } from "next";
import { SettingsIndex } from "@/components/settings/settings-index";
import { HydrateClient, getQueryClient, trpc } from "@/server/trpc/server";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Settings" };

export default async function SettingsPage() {
  await Promise.all([getQueryClient().prefetchQuery(trpc.repositorySettings.list.queryOptions()), getQueryClient().prefetchQuery(trpc.users.me.queryOptions())]);
  return (
    <HydrateClient>
      <SettingsIndex />
    </HydrateClient>
  );
}
