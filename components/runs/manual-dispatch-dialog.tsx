"use client";

import { useMutation, useQuery } from "@tanstack/react-query";
import { useRouter } from "next/navigation";
import { useId, useState } from "react";
import { toast } from "sonner";
import { DialogActions, FieldShell, inputClass } from "@/components/forms/fields";
import { useTRPC } from "@/components/providers/trpc";
import { Alert } from "@/components/ui/alert";
import { Button } from "@/components/ui/button";
import { Dialog } from "@/components/ui/dialog";
import { taskKindLabel } from "@/components/ui/format";

// Manual dispatch (runs.dispatchManual): a maintainer starts a run on a pull request or a branch,
// choosing the task kind (one per manual trigger rule of the repository), the stack (the rule's,
// or another) and instructions. The instructions reach the agent exactly as typed, and the dialog
// shows the block the prompt gets. One request id per opened dialog: a double submit is one run.

const INSTRUCTIONS_MAX = 10_000;

type Repo = { id: string; fullName: string; role: string };

export function ManualDispatchButton(props: { repositories: Repo[]; repositoryId?: string; pullRequestNumber?: number }) {
  const [open, setOpen] = useState(false);
  const repos = props.repositories.filter((r) => r.role === "maintainer" || r.role === "admin");
  if (repos.length === 0) return null;
  return (
    <>
      <Button type="button" onClick={() => setOpen(true)}>
        Dispatch a run
      </Button>
      <Dialog open={open} onClose={() => setOpen(false)} title="Dispatch a run" className="max-w-2xl">
        {open && <ManualDispatchForm repositories={repos} initialRepositoryId={repos.find((r) => r.id === props.repositoryId)?.id ?? repos[0]!.id} pullRequestNumber={props.pullRequestNumber} onClose={() => setOpen(false)} />}
      </Dialog>
    </>
  );
}

function ManualDispatchForm(props: { repositories: Repo[]; initialRepositoryId: string; pullRequestNumber?: number; onClose: () => void }) {
  const trpc = useTRPC();
  const router = useRouter();
  const id = useId();
  const [requestId] = useState(() => crypto.randomUUID());
  const [repositoryId, setRepositoryId] = useState(props.initialRepositoryId);
  const [targetKind, setTargetKind] = useState<"pull_request" | "branch">(props.pullRequestNumber ? "pull_request" : "branch");
  const [prNumber, setPrNumber] = useState(props.pullRequestNumber ? String(props.pullRequestNumber) : "");
  const [branch, setBranch] = useState<string | null>(null);
  const [taskKind, setTaskKind] = useState<string | null>(null);
  const [stackId, setStackId] = useState("");
  const [instructions, setInstructions] = useState("");
  const [refusal, setRefusal] = useState<string | null>(null);
  const options = useQuery(trpc.runs.dispatchOptions.queryOptions({ repositoryId }));
  const dispatch = useMutation(trpc.runs.dispatchManual.mutationOptions());

  const tasks = options.data?.taskStacks ?? [];
  const available = tasks.filter((t) => t.stack !== null);
  const task = tasks.find((t) => t.taskKind === taskKind) ?? available[0];
  const branchName = branch ?? options.data?.repository.defaultBranch ?? "";
  const ruleStack = task?.stack ?? null;

  const onSubmit = async (e: React.FormEvent) => {
    e.preventDefault();
    setRefusal(null);
    if (!task?.stack) return setRefusal(task?.reason ?? "No task kind can be dispatched on this repository");
    const number = Number(prNumber);
    if (targetKind === "pull_request" && !(Number.isInteger(number) && number > 0)) return setRefusal("Enter the pull request's number");
    try {
      const res = await dispatch.mutateAsync({
        repositoryId,
        requestId,
        target: targetKind === "pull_request" ? { kind: "pull_request", number } : { kind: "branch", name: branchName.trim() },
        taskKind: task.taskKind,
        stackId: stackId || undefined,
        instructions: instructions === "" ? undefined : instructions,
      });
      toast.success(`Dispatched: run #${res.number}`);
      props.onClose();
      router.push(`/runs/${res.runId}`);
    } catch (err) {
      setRefusal((err as { message: string }).message);
    }
  };

  return (
    <form onSubmit={onSubmit} noValidate className="space-y-3">
      <p className="text-sm text-zinc-700 dark:text-zinc-300">
        Starts a run now, through the repository&apos;s manual trigger rule for the task. A fork&apos;s pull request runs on an untrusted pool, as every trigger of it does.
      </p>
      {options.data?.refusal && <Alert variant="banner">{options.data.refusal}</Alert>}
      {refusal && (
        <Alert as="div" variant="banner">
          Not dispatched: {refusal}
        </Alert>
      )}
      <fieldset disabled={dispatch.isPending || !!options.data?.refusal} className="min-w-0 space-y-3">
        <FieldShell id={`${id}-repo`} label="Repository">
          <select id={`${id}-repo`} value={repositoryId} onChange={(e) => (setRepositoryId(e.target.value), setBranch(null), setTaskKind(null), setStackId(""))} className={inputClass}>
            {props.repositories.map((r) => (
              <option key={r.id} value={r.id}>
                {r.fullName}
              </option>
            ))}
          </select>
        </FieldShell>
        <FieldShell id={`${id}-target`} label="Run on">
          <div className="flex gap-2">
            <select id={`${id}-target`} value={targetKind} onChange={(e) => setTargetKind(e.target.value as "pull_request" | "branch")} className={`${inputClass} w-44`}>
              <option value="branch">Branch</option>
              <option value="pull_request">Pull request</option>
            </select>
            {targetKind === "branch" ? (
              <input aria-label="Branch" value={branchName} onChange={(e) => setBranch(e.target.value)} maxLength={255} className={`${inputClass} font-mono`} />
            ) : (
              <input aria-label="Pull request number" inputMode="numeric" value={prNumber} onChange={(e) => setPrNumber(e.target.value)} placeholder="12" className={inputClass} />
            )}
          </div>
          <p className="mt-1 text-xs text-zinc-500">
            The branch&apos;s head commit on the local forge; on GitHub, the newest head Airlock has recorded a check of. A pull request must be recorded and open.
          </p>
        </FieldShell>
        <FieldShell id={`${id}-task`} label="Task kind">
          <select id={`${id}-task`} value={task?.taskKind ?? ""} onChange={(e) => (setTaskKind(e.target.value), setStackId(""))} className={inputClass}>
            {tasks.map((t) => (
              <option key={t.taskKind} value={t.taskKind} disabled={t.stack === null}>
                {taskKindLabel[t.taskKind] ?? t.taskKind}
                {t.stack === null ? " (no stack)" : ""}
              </option>
            ))}
          </select>
          {task && task.stack === null && <p className="mt-1 text-xs text-amber-700 dark:text-amber-400">{task.reason}</p>}
          {task?.rule && <p className="mt-1 text-xs text-zinc-500">Rule {JSON.stringify(task.rule.name)} ({task.rule.scope === "global" ? "every repository" : "this repository"}).</p>}
        </FieldShell>
        <FieldShell id={`${id}-stack`} label="Stack">
          <select id={`${id}-stack`} value={stackId} onChange={(e) => setStackId(e.target.value)} className={inputClass}>
            <option value="">{ruleStack ? `The rule's stack (${ruleStack.name} v${ruleStack.version})` : "The rule's stack"}</option>
            {(options.data?.stacks ?? [])
              .filter((s) => s.id !== ruleStack?.id)
              .map((s) => (
                <option key={s.id} value={s.id}>
                  {s.name} (v{s.version})
                </option>
              ))}
          </select>
        </FieldShell>
        <FieldShell id={`${id}-instructions`} label="Instructions (optional)">
          <textarea id={`${id}-instructions`} value={instructions} onChange={(e) => setInstructions(e.target.value)} rows={5} maxLength={INSTRUCTIONS_MAX} className={`${inputClass} font-mono text-xs`} />
          <p className="mt-1 text-xs text-zinc-500">
            Given to the agent exactly as typed ({instructions.length}/{INSTRUCTIONS_MAX}). Secrets Airlock knows are redacted, as everywhere in a context bundle.
          </p>
        </FieldShell>
        {instructions.trim() !== "" && (
          <div>
            <p className="text-xs font-medium text-zinc-600 dark:text-zinc-400">Added to the end of the prompt (unless the stack&apos;s template places {"{{contextLabels}}"} itself):</p>
            <pre data-testid="instructions-preview" className="mt-1 max-h-48 overflow-auto whitespace-pre-wrap rounded border border-zinc-200 bg-zinc-50 p-2 font-mono text-xs dark:border-zinc-800 dark:bg-zinc-900">
              {`${options.data?.instructionsHeading ?? ""}\n${instructions}`}
            </pre>
          </div>
        )}
      </fieldset>
      <DialogActions onClose={props.onClose} pending={dispatch.isPending} label="Dispatch run" pendingLabel="Dispatching…" />
    </form>
  );
}
