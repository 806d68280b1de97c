"use client";

import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useRouter } from "next/navigation";
import { useId, useState } from "react";
import { toast } from "sonner";
import { useTRPC } from "@/components/providers/trpc";
import { ActionButton } from "@/components/ui/action-button";
import { useHydrated } from "@/components/ui/use-hydrated";

// "Rerun check": asks the change gate for a rerun of the run's check (writeBacks.requestRerun,
// maintainers only). On GitHub, every failed job of the workflow run, or the failed job alone
// when the run names one (GitHub cannot start a job from a step); the local CI always reruns
// the whole check, and the page says so. The rerun's Pipeline is linked to the run.

export function RerunButton({ runId, verdict }: { runId: string; verdict: { allowed: boolean; reason: string | null; step: { supported: boolean; why: string } } }) {
  const trpc = useTRPC();
  const router = useRouter();
  const queryClient = useQueryClient();
  const id = useId();
  // A pick made on the server HTML would be reset by hydration: the control waits for React.
  const hydrated = useHydrated();
  const [onlyJob, setOnlyJob] = useState(false);
  const ask = useMutation(
    trpc.writeBacks.requestRerun.mutationOptions({
      onSuccess: async (res) => {
        await queryClient.invalidateQueries({ queryKey: trpc.runs.byId.queryKey({ runId }) });
        if (res.kind === "approval") {
          toast.success("The rerun waits for an approval");
          router.push(`/approvals/${res.approvalId}`);
        } else toast.success("The check is being rerun (the change gate exempts it)");
      },
      onError: (err) => toast.error(err.message),
    }),
  );
  return (
    <div className="space-y-1">
      <div className="flex items-center gap-2">
        <ActionButton size="sm" disabledReason={ask.isPending ? "Asking…" : verdict.reason} onClick={() => ask.mutate({ runId, scope: onlyJob ? "failed_job" : "failed_jobs" })}>
          Rerun check
        </ActionButton>
        {verdict.step.supported && (
          <label htmlFor={id} className="flex items-center gap-1 text-xs">
            <input id={id} type="checkbox" checked={onlyJob} onChange={(e) => setOnlyJob(e.target.checked)} disabled={!hydrated} />
            only the failed job
          </label>
        )}
      </div>
      <p className="text-xs text-zinc-600 dark:text-zinc-400">{verdict.step.why}</p>
    </div>
  );
}
