import type { Metadata } from "next";
import { AuditLog } from "@/components/audit/audit-log";
import { auditListInput, loadAuditFilters } from "@/components/audit/filters";
import { HydrateClient, getQueryClient, trpc } from "@/server/trpc/server";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Audit log" };

export default async function AuditPage({ searchParams }: { searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  const filters = await loadAuditFilters(searchParams);
  await getQueryClient().prefetchInfiniteQuery(trpc.audit.list.infiniteQueryOptions(auditListInput(filters), { getNextPageParam: (last) => last.nextCursor }));
  return (
    <HydrateClient>
      <AuditLog />
    </HydrateClient>
  );
}
