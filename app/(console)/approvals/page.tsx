import type { Metadata } from "next";
import { ApprovalsQueue } from "@/components/approvals/approvals-queue";
import { approvalsFilterInput, loadApprovalFilters } from "@/components/approvals/filters";
import { HydrateClient, getQueryClient, trpc } from "@/server/trpc/server";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Approvals" };

export default async function ApprovalsPage({ searchParams }: { searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  const filter = approvalsFilterInput(await loadApprovalFilters(searchParams));
  const qc = getQueryClient();
  await Promise.all([
    qc.prefetchQuery(trpc.approvals.list.queryOptions({ ...filter, limit: 100 })),
    qc.prefetchQuery(trpc.approvals.counts.queryOptions(filter)),
    qc.prefetchQuery(trpc.repositories.mine.queryOptions()),
  ]);
  return (
    <HydrateClient>
      <ApprovalsQueue />
    </HydrateClient>
  );
}
