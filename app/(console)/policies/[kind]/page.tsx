import type { Metadata } from "next";
import { notFound } from "next/navigation";
import { PolicyEditor } from "@/components/policies/policy-editor";
import { PolicyKind } from "@/server/db/generated/enums";
import { HydrateClient, getQueryClient, trpc } from "@/server/trpc/server";

export const dynamic = "force-dynamic";

export async function generateMetadata({ params }: { params: Promise<{ kind: string }> }): Promise<Metadata> {
  return { title: `Policy ${(await params).kind}` };
}

function isPolicyKind(kind: string): kind is PolicyKind {
  return (Object.values(PolicyKind) as string[]).includes(kind);
}

export default async function PolicyPage({ params }: { params: Promise<{ kind: string }> }) {
  const { kind } = await params;
  if (!isPolicyKind(kind)) notFound();
  const qc = getQueryClient();
  await Promise.all([
    qc.prefetchQuery(trpc.policies.byKind.queryOptions({ kind })),
    qc.prefetchQuery(trpc.policies.versions.queryOptions({ kind })),
  ]);
  return (
    <HydrateClient>
      <PolicyEditor kind={kind} />
    </HydrateClient>
  );
}
