import type { Metadata } from "next";
import { AuditLog } from "@/components/audit/audit-log";
import { HydrateClient, getQueryClient, trpc } from "@/server/trpc/server";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Audit log" };

export default async function AuditPage() {
  await getQueryClient().prefetchInfiniteQuery(
    trpc.audit.list.infiniteQueryOptions({ limit: 50 }, { getNextPageParam: (last) => last.nextCursor }),
  );
  return (
    <HydrateClient>
      <AuditLog />
    </HydrateClient>
  );
}
