"use client";

import { useMutation, useQuery } from "@tanstack/react-query";
import { useRouter } from "next/navigation";
import { useId, useState } from "react";
import { toast } from "sonner";
import { DialogActions, FieldShell, inputClass } from "@/components/forms/fields";
import { useTRPC } from "@/components/providers/trpc";
import { Alert } from "@/components/ui/alert";
import { Dialog } from "@/components/ui/dialog";

// "Fork": a new run from this one's context with an edited prompt, another stack, or both
// (runs.fork). The prompt starts as the run's own; the stack as the run's. The server decides
// what counts as a change and refuses a fork that changes nothing; its refusal shows here.

export function ForkDialog(props: { run: { id: string; number: number; prompt: string; stackId: string | null; stackName: string | null }; open: boolean; onClose: () => void }) {
  return (
    <Dialog open={props.open} onClose={props.onClose} title={`Fork run #${props.run.number}`} className="max-w-2xl">
      {props.open && <ForkForm {...props} />}
    </Dialog>
  );
}

function ForkForm({ run, onClose }: { run: { id: string; number: number; prompt: string; stackId: string | null; stackName: string | null }; onClose: () => void }) {
  const trpc = useTRPC();
  const router = useRouter();
  const id = useId();
  const [prompt, setPrompt] = useState(run.prompt);
  const [stackId, setStackId] = useState("");
  const [refusal, setRefusal] = useState<string | null>(null);
  const stacks = useQuery(trpc.stacks.options.queryOptions());
  const fork = useMutation(trpc.runs.fork.mutationOptions());
  const onSubmit = async (e: React.FormEvent) => {
    e.preventDefault();
    setRefusal(null);
    try {
      const res = await fork.mutateAsync({ runId: run.id, prompt: prompt === run.prompt ? undefined : prompt, stackId: stackId || undefined });
      toast.success(`Forked: run #${res.number}`);
      onClose();
      router.push(`/runs/${res.runId}`);
    } catch (err) {
      setRefusal((err as { message: string }).message);
    }
  };
  const others = (stacks.data ?? []).filter((s) => s.id !== run.stackId);
  return (
    <form onSubmit={onSubmit} noValidate className="space-y-3">
      <p className="text-sm text-zinc-700 dark:text-zinc-300">
        A new run from this run&apos;s context bundle, commit and trust tier. Edit the prompt, choose another stack, or both; run #{run.number} is left as it is.
      </p>
      {refusal && (
        <Alert as="div" variant="banner">
          Not forked: {refusal}
        </Alert>
      )}
      <fieldset disabled={fork.isPending} className="min-w-0 space-y-3">
        <FieldShell id={`${id}-prompt`} label="Prompt">
          <textarea id={`${id}-prompt`} value={prompt} onChange={(e) => setPrompt(e.target.value)} rows={10} maxLength={100_000} className={`${inputClass} font-mono text-xs`} />
        </FieldShell>
        <FieldShell id={`${id}-stack`} label="Stack">
          <select id={`${id}-stack`} value={stackId} onChange={(e) => setStackId(e.target.value)} className={inputClass}>
            <option value="">{run.stackName ? `Same stack (${run.stackName})` : "Same stack"}</option>
            {others.map((s) => (
              <option key={s.id} value={s.id}>
                {s.name} (v{s.version})
              </option>
            ))}
          </select>
          <p className="mt-1 text-xs text-zinc-500">Another stack runs its current version; with the prompt unchanged, its own template is rendered against this run&apos;s context.</p>
        </FieldShell>
      </fieldset>
      <DialogActions onClose={onClose} pending={fork.isPending} label="Fork run" pendingLabel="Forking…" />
    </form>
  );
}
