import type { Metadata } from "next";
import { RuleEditor } from "@/components/triggers/rule-form";
import { HydrateClient, getQueryClient, trpc } from "@/server/trpc/server";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "New trigger rule" };

export default async function NewRulePage() {
  await getQueryClient().prefetchQuery(trpc.triggers.formOptions.queryOptions());
  return (
    <HydrateClient>
      <RuleEditor ruleId={null} />
    </HydrateClient>
  );
}
