"use client";

import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useRouter } from "next/navigation";
import { useState } from "react";
import { toast } from "sonner";
import { useTRPC } from "@/components/providers/trpc";
import { ActionButton } from "@/components/ui/action-button";
import { Button } from "@/components/ui/button";
import { Card } from "@/components/ui/card";
import { Dialog } from "@/components/ui/dialog";
import { ApprovalActions } from "@/components/approvals/approval-actions";
import { AttachContextDialog } from "./attach-context-dialog";
import { ForkDialog } from "./fork-dialog";
import type { RunDetailView } from "./types";

// The composer and the run's controls. Each control is enabled only when the
// server's verdict for this viewer says so (run state and role); otherwise it
// says why. A control whose mutation does not exist yet says "Not available yet".

export function RunFooter({ run }: { run: RunDetailView }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [confirming, setConfirming] = useState(false);
  const [reason, setReason] = useState("");
  const [prompt, setPrompt] = useState("");
  const [attaching, setAttaching] = useState(false);
  const [forking, setForking] = useState(false);
  const c = run.controls;
  // The footer decides the oldest pending approval; each one has its own controls in the right pane.
  const pendingApproval = run.approvals.find((a) => a.status === "pending");
  const router = useRouter();
  const refresh = () => queryClient.invalidateQueries({ queryKey: trpc.runs.byId.queryKey({ runId: run.id }) });
  const onError = (err: { message: string }) => toast.error(err.message);
  const retry = useMutation(
    trpc.runs.retry.mutationOptions({
      onSuccess: async (res) => {
        toast.success(`Retrying: attempt ${res.attemptNumber} is queued`);
        await refresh();
      },
      onError,
    }),
  );
  const dispatch = useMutation(
    trpc.runs.dispatch.mutationOptions({
      onSuccess: async () => {
        toast.success("Dispatched: the first attempt is queued");
        await refresh();
      },
      onError,
    }),
  );
  // Resume, fork and a continuation make a new run whose parent is this one: open it.
  const openChild = (what: string) => (res: { runId: string; number: number }) => {
    toast.success(`${what}: run #${res.number}`);
    setPrompt("");
    router.push(`/runs/${res.runId}`);
  };
  const resume = useMutation(trpc.runs.resume.mutationOptions({ onSuccess: openChild("Resumed"), onError }));
  const busy = retry.isPending || dispatch.isPending || resume.isPending;
  const cancel = useMutation(
    trpc.runs.cancel.mutationOptions({
      onSuccess: async (res) => {
        toast.success(`Run cancelled${res.attemptsCancelled > 0 ? ` (${res.attemptsCancelled} attempt stopped)` : ""}`);
        setConfirming(false);
        setReason("");
        await queryClient.invalidateQueries({ queryKey: trpc.runs.byId.queryKey({ runId: run.id }) });
      },
      onError: (err) => toast.error(err.message),
    }),
  );

  return (
    <Card as="section" padding="none" aria-label="Run controls" className="px-3 py-2">
      <div className="flex flex-wrap items-center gap-3">
        <label className="min-w-64 flex-1">
          <span className="sr-only">Continuation prompt</span>
          <textarea
            value={prompt}
            onChange={(e) => setPrompt(e.target.value)}
            rows={1}
            placeholder={c.continue.enabled ? "Continue the session with a prompt…" : `Continue the session with a prompt… (${c.continue.reason})`}
            aria-describedby={c.continue.enabled ? undefined : "continue-reason"}
            disabled={!c.continue.enabled}
            className="block h-8 w-full resize-y rounded-md border border-zinc-300 bg-white px-2 py-1 text-sm disabled:bg-zinc-50 dark:border-zinc-700 dark:bg-zinc-950 dark:disabled:bg-zinc-900"
          />
          {!c.continue.enabled && (
            <span id="continue-reason" className="sr-only">
              {c.continue.reason}
              {c.continue.detail ? `. ${c.continue.detail}` : ""}
            </span>
          )}
        </label>
        <div className="flex flex-wrap items-center gap-2">
          <ActionButton
            size="sm"
            disabledReason={c.continue.reason ?? (prompt.trim() === "" ? "Write a prompt first" : null)}
            detail={c.continue.detail}
            onClick={() => resume.mutate({ runId: run.id, instructions: prompt.trim() })}
          >
            Send
          </ActionButton>
          <ActionButton size="sm" disabledReason={c.attachContext.reason} detail={c.attachContext.detail} onClick={() => setAttaching(true)}>
            Attach context
          </ActionButton>
          <span aria-hidden className="mx-1 h-6 border-l border-zinc-200 dark:border-zinc-700" />
          <ApprovalActions
            size="sm"
            approvalId={pendingApproval?.id ?? ""}
            artifactDigest={pendingApproval?.artifactDigest ?? null}
            headSha={pendingApproval?.targetHeadSha ?? null}
            disabledReason={c.reject.reason}
            approveRefusal={c.approve.reason ?? pendingApproval?.approveRefusal ?? null}
            detail={c.approve.detail}
          />
          <span aria-hidden className="mx-1 h-6 border-l border-zinc-200 dark:border-zinc-700" />
          {run.status === "suggested" && (
            <ActionButton size="sm" variant="primary" disabledReason={c.dispatch.reason ?? (busy ? "Working…" : null)} detail={c.dispatch.detail} onClick={() => dispatch.mutate({ runId: run.id })}>
              Dispatch
            </ActionButton>
          )}
          <ActionButton size="sm" variant="danger" disabledReason={c.cancel.reason} detail={c.cancel.detail} onClick={() => setConfirming(true)}>
            Cancel run
          </ActionButton>
          <ActionButton size="sm" disabledReason={c.retry.reason ?? (busy ? "Working…" : null)} detail={c.retry.detail} onClick={() => retry.mutate({ runId: run.id })}>
            Retry
          </ActionButton>
          <ActionButton size="sm" disabledReason={c.resume.reason ?? (busy ? "Working…" : null)} detail={c.resume.detail} onClick={() => resume.mutate({ runId: run.id })}>
            Resume
          </ActionButton>
          <ActionButton size="sm" disabledReason={c.fork.reason ?? (busy ? "Working…" : null)} detail={c.fork.detail} onClick={() => setForking(true)}>
            Fork
          </ActionButton>
        </div>
      </div>
      <AttachContextDialog runId={run.id} open={attaching} onClose={() => setAttaching(false)} />
      <ForkDialog run={{ id: run.id, number: run.number, prompt: run.prompt, stackId: run.stackId, stackName: run.stack.name }} open={forking} onClose={() => setForking(false)} />
      <Dialog open={confirming} onClose={() => setConfirming(false)} title={`Cancel run #${run.number}?`}>
        <form
          onSubmit={(e) => {
            e.preventDefault();
            cancel.mutate({ runId: run.id, reason: reason.trim() || undefined });
          }}
          className="space-y-3"
        >
          <p className="text-sm text-zinc-700 dark:text-zinc-300">The agent session stops and the current attempt is marked cancelled. A new attempt needs a retry.</p>
          <label className="block text-sm">
            Reason (optional)
            <input
              value={reason}
              onChange={(e) => setReason(e.target.value)}
              maxLength={500}
              className="mt-1 block w-full rounded-md border border-zinc-300 bg-white px-2 py-1.5 text-sm dark:border-zinc-700 dark:bg-zinc-950"
            />
          </label>
          <div className="flex justify-end gap-2">
            <Button type="button" onClick={() => setConfirming(false)}>
              Keep running
            </Button>
            <Button type="submit" variant="danger" disabled={cancel.isPending}>
              {cancel.isPending ? "Cancelling…" : "Cancel run"}
            </Button>
          </div>
        </form>
      </Dialog>
    </Card>
  );
}
