"use client";

import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useRouter } from "next/navigation";
import { toast } from "sonner";
import { useTRPC } from "@/components/providers/trpc";
import { ActionButton } from "@/components/ui/action-button";

// "Post diagnosis as a comment": asks the change gate for the run's diagnosis summary on its PR
// (writeBacks.requestDiagnosisComment, maintainers only). Held for approval, it opens the
// approval screen, which shows the comment byte for byte; exempt, it is queued and shows up
// under Write-backs. The verdict (why not) comes from the run's read model.

export function DiagnosisCommentButton({ runId, verdict }: { runId: string; verdict: { allowed: boolean; reason: string | null } }) {
  const trpc = useTRPC();
  const router = useRouter();
  const queryClient = useQueryClient();
  const ask = useMutation(
    trpc.writeBacks.requestDiagnosisComment.mutationOptions({
      onSuccess: async (res) => {
        await queryClient.invalidateQueries({ queryKey: trpc.runs.byId.queryKey({ runId }) });
        if (res.kind === "approval") {
          toast.success("The comment waits for an approval");
          router.push(`/approvals/${res.approvalId}`);
        } else toast.success("The comment is being posted (the change gate exempts it)");
      },
      onError: (err) => toast.error(err.message),
    }),
  );
  return (
    <ActionButton size="sm" disabledReason={ask.isPending ? "Asking…" : verdict.reason} onClick={() => ask.mutate({ runId })}>
      Post diagnosis as a comment
    </ActionButton>
  );
}
