import type { Metadata } from "next";
import { RuleEditor } from "@/components/triggers/rule-form";
import { HydrateClient, getQueryClient, notFoundIfMissing, trpc } from "@/server/trpc/server";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Trigger rule" };

export default async function RulePage({ params }: { params: Promise<{ ruleId: string }> }) {
  const { ruleId } = await params;
  const qc = getQueryClient();
  const rule = trpc.triggers.byId.queryOptions({ ruleId });
  await Promise.all([qc.prefetchQuery(trpc.triggers.formOptions.queryOptions()), qc.prefetchQuery(rule)]);
  notFoundIfMissing(rule.queryKey);
  return (
    <HydrateClient>
      <RuleEditor ruleId={ruleId} />
    </HydrateClient>
  );
}
