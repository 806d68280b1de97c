"use client";

import { useState } from "react";
import type { FieldValues, UseFormReturn } from "react-hook-form";
import { toast } from "sonner";
import { useHydrated } from "@/components/ui/use-hydrated";
import { applyServerErrors, conflictOf, type Conflict, type ServerError } from "./server-errors";
import { useUnsavedChangesGuard } from "./use-unsaved-changes-guard";

// What every configuration form does around its save: guard unsaved edits, put a refusal's
// messages on their fields, keep a conflicting save's details for the ConflictPanel, toast.
// `hydrated` is false until React owns the page: forms keep their fields disabled until then,
// since typing into the server HTML would be reset by hydration and a click would do nothing.

export function useConfigForm<T extends FieldValues>(form: Pick<UseFormReturn<T>, "setError" | "getValues" | "formState">, opts: { canEdit: boolean }) {
  const [conflict, setConflict] = useState<Conflict | null>(null);
  const [refusal, setRefusal] = useState<string[]>([]);
  useUnsavedChangesGuard(opts.canEdit && form.formState.isDirty);
  const hydrated = useHydrated();

  return {
    hydrated,
    conflict,
    refusal,
    clear() {
      setConflict(null);
      setRefusal([]);
    },
    onSaved(message: string) {
      setConflict(null);
      setRefusal([]);
      toast.success(message);
    },
    onError(error: ServerError) {
      const stale = conflictOf(error);
      setConflict(stale);
      if (stale) {
        setRefusal([]);
        toast.error("Not saved: someone else saved a newer version.");
        return;
      }
      // Messages no field shows go to the banner; with none placed on a field, the message itself.
      const loose = applyServerErrors(form, error);
      const onFields = Object.keys(error.data?.fieldErrors ?? {}).length > 0 || Boolean(error.data?.details?.fieldErrors);
      setRefusal(loose.length > 0 ? loose : onFields ? [] : [error.message]);
      toast.error(`Not saved: ${error.message}`);
    },
  };
}
