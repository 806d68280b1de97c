import type { Metadata } from "next";
import { ApprovalReview } from "@/components/approvals/approval-review";
import { HydrateClient, getQueryClient, trpc } from "@/server/trpc/server";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Review approval" };

export default async function ApprovalPage({ params }: { params: Promise<{ approvalId: string }> }) {
  const { approvalId } = await params;
  const qc = getQueryClient();
  await qc.prefetchQuery(trpc.approvals.byId.queryOptions({ approvalId }));
  return (
    <HydrateClient>
      <ApprovalReview approvalId={approvalId} />
    </HydrateClient>
  );
}
