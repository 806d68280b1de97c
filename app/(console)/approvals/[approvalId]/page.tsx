import type { Metadata } from "next";
import { ApprovalReview } from "@/components/approvals/approval-review";
import { HydrateClient, getQueryClient, notFoundIfMissing, trpc } from "@/server/trpc/server";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Review approval" };

export default async function ApprovalPage({ params }: { params: Promise<{ approvalId: string }> }) {
  const { approvalId } = await params;
  const qc = getQueryClient();
  const approval = trpc.approvals.byId.queryOptions({ approvalId });
  await qc.prefetchQuery(approval);
  notFoundIfMissing(approval.queryKey);
  return (
    <HydrateClient>
      <ApprovalReview approvalId={approvalId} />
    </HydrateClient>
  );
}
