import type { Metadata } from "next";
import { ApprovalsQueue } from "@/components/approvals/approvals-queue";
import { HydrateClient, getQueryClient, trpc } from "@/server/trpc/server";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Approvals" };

export default async function ApprovalsPage() {
  const qc = getQueryClient();
  await Promise.all([
    qc.prefetchQuery(trpc.approvals.list.queryOptions({ limit: 100 })),
    qc.prefetchQuery(trpc.approvals.counts.queryOptions({})),
    qc.prefetchQuery(trpc.repositories.mine.queryOptions()),
  ]);
  return (
    <HydrateClient>
      <ApprovalsQueue />
    </HydrateClient>
  );
}
