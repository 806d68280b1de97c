"use client";

import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useRouter } from "next/navigation";
import { useId, useState } from "react";
import { toast } from "sonner";
import { DialogActions, FieldShell, inputClass } from "@/components/forms/fields";
import { useTRPC } from "@/components/providers/trpc";
import { ActionButton } from "@/components/ui/action-button";
import { Alert } from "@/components/ui/alert";
import { Dialog } from "@/components/ui/dialog";

// "Open a pull request": the run's patch on a new branch and a PR from it (writeBacks.requestOpenPr,
// maintainers only). The branch name, title and notes are proposed here; the approval screen then
// shows the branch, base, title and the whole body exactly as they will be sent.

type Verdict = { shown: boolean; allowed: boolean; reason: string | null; defaultBranch: string };

export function OpenPrButton({ runId, verdict }: { runId: string; verdict: Verdict }) {
  const [open, setOpen] = useState(false);
  if (!verdict.shown) return null;
  return (
    <>
      <ActionButton size="sm" disabledReason={verdict.reason} onClick={() => setOpen(true)}>
        Open a pull request
      </ActionButton>
      <Dialog open={open} onClose={() => setOpen(false)} title="Open a pull request with the patch" className="max-w-xl">
        {open && <OpenPrForm runId={runId} defaultBranch={verdict.defaultBranch} onClose={() => setOpen(false)} />}
      </Dialog>
    </>
  );
}

function OpenPrForm({ runId, defaultBranch, onClose }: { runId: string; defaultBranch: string; onClose: () => void }) {
  const trpc = useTRPC();
  const router = useRouter();
  const queryClient = useQueryClient();
  const id = useId();
  const [branch, setBranch] = useState(defaultBranch);
  const [title, setTitle] = useState("");
  const [notes, setNotes] = useState("");
  const [refusal, setRefusal] = useState<string | null>(null);
  const ask = useMutation(trpc.writeBacks.requestOpenPr.mutationOptions());
  const onSubmit = async (e: React.FormEvent) => {
    e.preventDefault();
    setRefusal(null);
    try {
      const res = await ask.mutateAsync({ runId, branch, title: title || undefined, notes: notes || undefined });
      await queryClient.invalidateQueries({ queryKey: trpc.runs.byId.queryKey({ runId }) });
      onClose();
      if (res.kind === "approval") {
        toast.success("The pull request waits for an approval");
        router.push(`/approvals/${res.approvalId}`);
      } else toast.success("The pull request is being opened (the change gate exempts it)");
    } catch (err) {
      setRefusal((err as { message: string }).message);
    }
  };
  return (
    <form onSubmit={onSubmit} noValidate className="space-y-3">
      <p className="text-sm text-zinc-700 dark:text-zinc-300">
        The patch is committed on a new branch, starting at the commit the agent worked on, and a pull request is opened from it into the run&apos;s branch. The change gate decides whether a person approves it first; a fork&apos;s run always needs one.
      </p>
      {refusal && (
        <Alert as="div" variant="banner">
          Not asked: {refusal}
        </Alert>
      )}
      <fieldset disabled={ask.isPending} className="min-w-0 space-y-3">
        <FieldShell id={`${id}-branch`} label="New branch">
          <input id={`${id}-branch`} value={branch} onChange={(e) => setBranch(e.target.value)} maxLength={100} className={`${inputClass} font-mono text-xs`} />
        </FieldShell>
        <FieldShell id={`${id}-title`} label={<>Title (empty: &ldquo;Airlock run #…: the run&apos;s title&rdquo;)</>}>
          <input id={`${id}-title`} value={title} onChange={(e) => setTitle(e.target.value)} maxLength={200} className={inputClass} />
        </FieldShell>
        <FieldShell id={`${id}-notes`} label="Notes added to the body (optional; HTML is escaped, mentions are broken)">
          <textarea id={`${id}-notes`} value={notes} onChange={(e) => setNotes(e.target.value)} rows={4} maxLength={4000} className={inputClass} />
        </FieldShell>
      </fieldset>
      <DialogActions onClose={onClose} pending={ask.isPending} label="Ask to open the PR" pendingLabel="Asking…" />
    </form>
  );
}
