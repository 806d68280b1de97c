"use client";

import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useRouter } from "next/navigation";
import { useId, useState } from "react";
import { toast } from "sonner";
import { useTRPC } from "@/components/providers/trpc";
import { ActionButton } from "@/components/ui/action-button";
import { useHydrated } from "@/components/ui/use-hydrated";

// "Post review": asks the change gate for a review of the run's PR carrying its findings
// (writeBacks.requestReview, maintainers only), commenting, requesting changes or approving.
// An approving review always waits for a person; so does any review of a fork's run. Held for
// approval, it opens the approval screen, which shows the body and the event byte for byte.

const choices = [
  { value: "comment", label: "Comment" },
  { value: "request_changes", label: "Request changes" },
  { value: "approve", label: "Approve" },
] as const;

type Choice = (typeof choices)[number]["value"];

export function ReviewButton({ runId, verdict }: { runId: string; verdict: { allowed: boolean; reason: string | null } }) {
  const trpc = useTRPC();
  const router = useRouter();
  const queryClient = useQueryClient();
  const id = useId();
  // A pick made on the server HTML would be reset by hydration: the control waits for React.
  const hydrated = useHydrated();
  const [choice, setChoice] = useState<Choice>("comment");
  const ask = useMutation(
    trpc.writeBacks.requestReview.mutationOptions({
      onSuccess: async (res) => {
        await queryClient.invalidateQueries({ queryKey: trpc.runs.byId.queryKey({ runId }) });
        if (res.kind === "approval") {
          toast.success("The review waits for an approval");
          router.push(`/approvals/${res.approvalId}`);
        } else toast.success("The review is being posted (the change gate exempts it)");
      },
      onError: (err) => toast.error(err.message),
    }),
  );
  return (
    <span className="inline-flex items-center gap-1.5">
      <label htmlFor={id} className="sr-only">
        Review event
      </label>
      <select id={id} className="rounded border border-zinc-300 bg-white px-1.5 py-1 text-sm dark:border-zinc-700 dark:bg-zinc-900" value={choice} onChange={(e) => setChoice(e.target.value as Choice)} disabled={!verdict.allowed || !hydrated}>
        {choices.map((c) => (
          <option key={c.value} value={c.value}>
            {c.label}
          </option>
        ))}
      </select>
      <ActionButton size="sm" disabledReason={ask.isPending ? "Asking…" : verdict.reason} onClick={() => ask.mutate({ runId, choice })}>
        Post review
      </ActionButton>
    </span>
  );
}
