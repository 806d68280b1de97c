import type { Metadata } from "next";
import { ArtifactView } from "@/components/runs/artifact-view";
import { HydrateClient, getQueryClient, notFoundIfMissing, trpc } from "@/server/trpc/server";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Artifact" };

export default async function ArtifactPage({ params }: { params: Promise<{ runId: string; artifactId: string }> }) {
  const { runId, artifactId } = await params;
  const artifact = trpc.runs.artifact.queryOptions({ runId, artifactId });
  await getQueryClient().prefetchQuery(artifact);
  notFoundIfMissing(artifact.queryKey);
  return (
    <HydrateClient>
      <ArtifactView runId={runId} artifactId={artifactId} />
    </HydrateClient>
  );
}
