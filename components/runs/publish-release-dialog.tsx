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

// "Publish release": asks to publish one of the run's artifacts under a tag, with the run's
// readiness report (writeBacks.requestPublishRelease, maintainers). It always waits for a person:
// the approval screen shows the tag, the notes byte for byte, the report and the artifact's digest.

type Verdict = { shown: boolean; allowed: boolean; reason: string | null; tag: string | null };
type RunArtifact = { id: string; name: string; kind: string };

export function PublishReleaseButton({ runId, verdict, artifacts }: { runId: string; verdict: Verdict; artifacts: RunArtifact[] }) {
  const [open, setOpen] = useState(false);
  if (!verdict.shown) return null;
  return (
    <>
      <ActionButton size="sm" disabledReason={verdict.reason} onClick={() => setOpen(true)}>
        Publish release
      </ActionButton>
      <Dialog open={open} onClose={() => setOpen(false)} title="Publish a release" className="max-w-xl">
        {open && <PublishForm runId={runId} tag={verdict.tag ?? ""} artifacts={artifacts.filter((a) => a.kind !== "patch")} onClose={() => setOpen(false)} />}
      </Dialog>
    </>
  );
}

function PublishForm({ runId, tag: initialTag, artifacts, onClose }: { runId: string; tag: string; artifacts: RunArtifact[]; onClose: () => void }) {
  const trpc = useTRPC();
  const router = useRouter();
  const queryClient = useQueryClient();
  const id = useId();
  const [tag, setTag] = useState(initialTag);
  const [artifactId, setArtifactId] = useState("");
  const [notes, setNotes] = useState("");
  const [refusal, setRefusal] = useState<string | null>(null);
  const ask = useMutation(trpc.writeBacks.requestPublishRelease.mutationOptions());
  const onSubmit = async (e: React.FormEvent) => {
    e.preventDefault();
    setRefusal(null);
    try {
      const res = await ask.mutateAsync({ runId, tag: tag || undefined, artifactId: artifactId || undefined, notes: notes || undefined });
      await queryClient.invalidateQueries({ queryKey: trpc.runs.byId.queryKey({ runId }) });
      onClose();
      toast.success("The release waits for a person's approval");
      router.push(`/approvals/${res.kind === "approval" ? res.approvalId : ""}`);
    } catch (err) {
      setRefusal((err as { message: string }).message);
    }
  };
  return (
    <form onSubmit={onSubmit} noValidate className="space-y-3">
      <p className="text-sm text-zinc-700 dark:text-zinc-300">
        Publishing is privileged and always waits for a person. The approval screen shows the readiness report, the release notes as they will be published, and the artifact&apos;s digest; a changed artifact is refused as stale.
      </p>
      {refusal && (
        <Alert as="div" variant="banner">
          Not asked: {refusal}
        </Alert>
      )}
      <fieldset disabled={ask.isPending} className="min-w-0 space-y-3">
        <FieldShell id={`${id}-tag`} label="Tag">
          <input id={`${id}-tag`} value={tag} onChange={(e) => setTag(e.target.value)} maxLength={100} className={`${inputClass} font-mono text-xs`} />
        </FieldShell>
        <FieldShell id={`${id}-artifact`} label="Artifact to publish">
          <select id={`${id}-artifact`} value={artifactId} onChange={(e) => setArtifactId(e.target.value)} className={inputClass}>
            <option value="">The readiness report itself</option>
            {artifacts.map((a) => (
              <option key={a.id} value={a.id}>
                {a.name} ({a.kind})
              </option>
            ))}
          </select>
        </FieldShell>
        <FieldShell id={`${id}-notes`} label="Notes added to the release (optional; HTML is escaped, mentions are broken)">
          <textarea id={`${id}-notes`} value={notes} onChange={(e) => setNotes(e.target.value)} rows={4} maxLength={8000} className={inputClass} />
        </FieldShell>
      </fieldset>
      <DialogActions onClose={onClose} pending={ask.isPending} label="Ask to publish" pendingLabel="Asking…" />
    </form>
  );
}
