import type { Metadata } from "next";
import { GithubAppSettings } from "@/components/settings/github-app-settings";
import { HydrateClient, getQueryClient, trpc } from "@/server/trpc/server";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "GitHub App" };

export default async function GithubSettingsPage({ searchParams }: { searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  const params = await searchParams;
  await getQueryClient().prefetchQuery(trpc.githubApp.get.queryOptions());
  const error = typeof params.error === "string" ? params.error.slice(0, 500) : null;
  return (
    <HydrateClient>
      <GithubAppSettings created={params.created === "1"} error={error} />
    </HydrateClient>
  );
}
