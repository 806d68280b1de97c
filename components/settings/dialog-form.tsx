"use client";

import { zodResolver } from "@hookform/resolvers/zod";
import { useId, useState } from "react";
import { FormProvider, useForm, type DefaultValues, type FieldValues } from "react-hook-form";
import type { z } from "zod";
import { ConflictPanel, ReadOnlyNote, RefusalBanner } from "@/components/forms/form-status";
import { UNSAVED_MESSAGE } from "@/components/forms/use-unsaved-changes-guard";
import { useConfigForm } from "@/components/forms/use-config-form";
import type { ServerError } from "@/components/forms/server-errors";
import { Button } from "@/components/ui/button";
import { Dialog } from "@/components/ui/dialog";

// A settings record (pool, service account, grant) edited in a dialog: the same zod schema as its
// procedure, field errors from client and server, a conflicting save shown with the other
// person's change, and a question before closing over unsaved edits.

type Props<In extends FieldValues, Out> = {
  title: string;
  open: boolean;
  onClose: () => void;
  schema: z.ZodType<Out, In>;
  defaults: In;
  /** null for a new record. */
  version: number | null;
  canEdit: { allowed: boolean; reason: string | null };
  /** Saves and returns a success message; throws the tRPC error when refused. */
  save: (values: Out, expectedVersion: number | null) => Promise<string>;
  children: React.ReactNode;
};

export function DialogForm<In extends FieldValues, Out>(props: Props<In, Out>) {
  return (
    <Dialog open={props.open} onClose={props.onClose} title={props.title} className="max-w-2xl">
      {props.open && <DialogBody {...props} />}
    </Dialog>
  );
}

function DialogBody<In extends FieldValues, Out>({ onClose, schema, defaults, version, canEdit, save, children }: Props<In, Out>) {
  const noteId = useId();
  const [baseVersion, setBaseVersion] = useState(version);
  const [saving, setSaving] = useState(false);
  const form = useForm<In, unknown, Out>({ resolver: zodResolver(schema), mode: "onTouched", defaultValues: defaults as DefaultValues<In> });
  const status = useConfigForm(form, { canEdit: canEdit.allowed });
  const close = () => {
    if (form.formState.isDirty && canEdit.allowed && !window.confirm(UNSAVED_MESSAGE)) return;
    onClose();
  };
  const onSubmit = form.handleSubmit(async (values) => {
    setSaving(true);
    try {
      const message = await save(values, baseVersion);
      form.reset(defaults);
      status.onSaved(message);
      onClose();
    } catch (err) {
      status.onError(err as ServerError);
    } finally {
      setSaving(false);
    }
  });
  return (
    <FormProvider {...form}>
      <form onSubmit={onSubmit} noValidate className="space-y-3">
        {!canEdit.allowed && canEdit.reason && <ReadOnlyNote id={noteId} reason={canEdit.reason} />}
        {status.conflict && (
          <ConflictPanel
            conflict={status.conflict}
            onLoadTheirs={() => {
              const conflict = status.conflict;
              if (!conflict) return;
              form.reset({ ...defaults, ...conflict.current } as In);
              setBaseVersion(conflict.currentVersion);
              status.clear();
            }}
            onKeepMine={() => {
              if (status.conflict) setBaseVersion(status.conflict.currentVersion);
              status.clear();
            }}
          />
        )}
        <RefusalBanner messages={status.refusal} />
        <fieldset disabled={!canEdit.allowed || saving || !status.hydrated} aria-describedby={!canEdit.allowed ? noteId : undefined} className="min-w-0 space-y-3">
          {children}
        </fieldset>
        <div className="flex justify-end gap-2 border-t border-zinc-200 pt-3 dark:border-zinc-800">
          <Button type="button" onClick={close}>
            {canEdit.allowed ? "Cancel" : "Close"}
          </Button>
          {canEdit.allowed && (
            <Button type="submit" variant="primary" disabled={saving}>
              {saving ? "Saving…" : baseVersion === null ? "Create" : `Save as v${baseVersion + 1}`}
            </Button>
          )}
        </div>
      </form>
    </FormProvider>
  );
}
