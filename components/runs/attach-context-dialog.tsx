"use client";

import { zodResolver } from "@hookform/resolvers/zod";
import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { FormProvider, useForm, useWatch } from "react-hook-form";
import { toast } from "sonner";
import { SelectField, TextAreaField, TextField } from "@/components/forms/fields";
import { RefusalBanner } from "@/components/forms/form-status";
import { applyServerErrors, type ServerError } from "@/components/forms/server-errors";
import { UNSAVED_MESSAGE } from "@/components/forms/use-unsaved-changes-guard";
import { useTRPC } from "@/components/providers/trpc";
import { Button } from "@/components/ui/button";
import { Dialog } from "@/components/ui/dialog";
import { zAttachContextInput, type AttachContextFormValues, type AttachContextInput } from "@/server/domain/runs/schemas";

// "Attach context": a note, a link or a file excerpt added to the run's transcript. The same zod
// schema as runs.attachContext; one attachment id per opened dialog, so a retried or double
// submit attaches once. The server redacts secrets before anything is stored.

const blank = (): AttachContextFormValues => ({ attachmentId: crypto.randomUUID(), kind: "note", title: "", url: "", path: "", startLine: "", text: "" });

export function AttachContextDialog({ runId, open, onClose }: { runId: string; open: boolean; onClose: () => void }) {
  return (
    <Dialog open={open} onClose={onClose} title="Attach context" className="max-w-2xl">
      {open && <AttachContextForm runId={runId} onClose={onClose} />}
    </Dialog>
  );
}

function AttachContextForm({ runId, onClose }: { runId: string; onClose: () => void }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [refusal, setRefusal] = useState<string[]>([]);
  const form = useForm<AttachContextFormValues, unknown, AttachContextInput>({ resolver: zodResolver(zAttachContextInput), mode: "onTouched", defaultValues: blank() });
  const kind = useWatch({ control: form.control, name: "kind" });
  const attach = useMutation(trpc.runs.attachContext.mutationOptions());
  const close = () => {
    if (form.formState.isDirty && !window.confirm(UNSAVED_MESSAGE)) return;
    onClose();
  };
  const onSubmit = form.handleSubmit(async (values) => {
    setRefusal([]);
    try {
      const res = await attach.mutateAsync({ runId, ...values });
      toast.success(`Context attached as event #${res.seq}${res.redactions > 0 ? ` (${res.redactions} secret${res.redactions === 1 ? "" : "s"} redacted)` : ""}`);
      await queryClient.invalidateQueries({ queryKey: trpc.runs.byId.queryKey({ runId }) });
      onClose();
    } catch (err) {
      const error = err as ServerError;
      const loose = applyServerErrors(form, error);
      setRefusal(loose.length > 0 ? loose : [error.message]);
      toast.error(`Not attached: ${error.message}`);
    }
  });
  return (
    <FormProvider {...form}>
      <form onSubmit={onSubmit} noValidate className="space-y-3">
        <RefusalBanner messages={refusal} />
        <fieldset disabled={attach.isPending} className="min-w-0 space-y-3">
          <div className="grid gap-3 sm:grid-cols-2">
            <SelectField
              name="kind"
              label="Kind"
              options={[
                { value: "note", label: "Note" },
                { value: "link", label: "Link" },
                { value: "file_excerpt", label: "File excerpt" },
              ]}
            />
            <TextField name="title" label="Title" hint="Optional" />
          </div>
          {kind === "link" && <TextField name="url" label="URL" placeholder="https://…" mono />}
          {kind === "file_excerpt" && (
            <div className="grid gap-3 sm:grid-cols-[1fr_8rem]">
              <TextField name="path" label="Path" placeholder="src/auth/session.ts" mono />
              <TextField name="startLine" label="First line" hint="Optional" mono />
            </div>
          )}
          <TextAreaField
            name="text"
            label={kind === "file_excerpt" ? "Excerpt" : kind === "link" ? "Why it matters (optional)" : "Note"}
            rows={6}
            mono={kind === "file_excerpt"}
            hint="Secrets (tokens, granted secret values) are redacted before it is stored."
          />
        </fieldset>
        <div className="flex justify-end gap-2 border-t border-zinc-200 pt-3 dark:border-zinc-800">
          <Button type="button" onClick={close}>
            Cancel
          </Button>
          <Button type="submit" variant="primary" disabled={attach.isPending}>
            {attach.isPending ? "Attaching…" : "Attach"}
          </Button>
        </div>
      </form>
    </FormProvider>
  );
}
