import type { Metadata } from "next";
import { ArtifactView } from "@/components/runs/artifact-view";
import { HydrateClient, getQueryClient, trpc } from "@/server/trpc/server";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Artifact" };

export default async function ArtifactPage({ params }: { params: Promise<{ runId: string; artifactId: string }> }) {
  const { runId, artifactId } = await params;
  await getQueryClient().prefetchQuery(trpc.runs.artifact.queryOptions({ runId, artifactId }));
  return (
    <HydrateClient>
      <ArtifactView runId={runId} artifactId={artifactId} />
    </HydrateClient>
  );
}
