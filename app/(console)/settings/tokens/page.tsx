import type { Metadata } from "next";
import { ApiTokensSettings } from "@/components/settings/api-tokens-settings";
import { HydrateClient, getQueryClient, trpc } from "@/server/trpc/server";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "API tokens" };

export default async function ApiTokensPage() {
  const qc = getQueryClient();
  await Promise.all([qc.prefetchQuery(trpc.apiTokens.list.queryOptions()), qc.prefetchQuery(trpc.repositorySettings.list.queryOptions())]);
  return (
    <HydrateClient>
      <ApiTokensSettings />
    </HydrateClient>
  );
}
