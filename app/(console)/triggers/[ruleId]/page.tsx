import type { Metadata } from "next";
import { RuleEditor } from "@/components/triggers/rule-form";
import { HydrateClient, getQueryClient, trpc } from "@/server/trpc/server";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Trigger rule" };

export default async function RulePage({ params }: { params: Promise<{ ruleId: string }> }) {
  const { ruleId } = await params;
  const qc = getQueryClient();
  await Promise.all([qc.prefetchQuery(trpc.triggers.formOptions.queryOptions()), qc.prefetchQuery(trpc.triggers.byId.queryOptions({ ruleId }))]);
  return (
    <HydrateClient>
      <RuleEditor ruleId={ruleId} />
    </HydrateClient>
  );
}
