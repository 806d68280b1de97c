import type { Metadata } from "next";
import { RepositorySettings } from "@/components/settings/repository-settings";
import { HydrateClient, getQueryClient, trpc } from "@/server/trpc/server";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Repository settings" };

export default async function RepositorySettingsPage({ params }: { params: Promise<{ repositoryId: string }> }) {
  const { repositoryId } = await params;
  await getQueryClient().prefetchQuery(trpc.repositorySettings.get.queryOptions({ repositoryId }));
  return (
    <HydrateClient>
      <RepositorySettings repositoryId={repositoryId} />
    </HydrateClient>
  );
}
