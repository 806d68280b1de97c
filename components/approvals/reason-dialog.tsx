"use client";

import { useState } from "react";
import { Button } from "@/components/ui/button";
import { Dialog } from "@/components/ui/dialog";

// A decision that needs a written reason (a rejection, a push-protection override): the dialog,
// its required text and its two buttons, one shape for both.

export function ReasonDialog(props: {
  open: boolean;
  onClose: () => void;
  title: string;
  label: string;
  keepLabel: string;
  submitLabel: string;
  pendingLabel: string;
  pending: boolean;
  onSubmit: (reason: string) => void;
}) {
  const [reason, setReason] = useState("");
  return (
    <Dialog open={props.open} onClose={props.onClose} title={props.title}>
      <form
        className="space-y-3"
        onSubmit={(e) => {
          e.preventDefault();
          props.onSubmit(reason);
        }}
      >
        <label className="block text-sm">
          {props.label}
          <textarea
            required
            value={reason}
            onChange={(e) => setReason(e.target.value)}
            maxLength={2000}
            rows={3}
            className="mt-1 block w-full rounded-md border border-zinc-300 bg-white px-2 py-1.5 text-sm dark:border-zinc-700 dark:bg-zinc-950"
          />
        </label>
        <div className="flex justify-end gap-2">
          <Button type="button" onClick={props.onClose}>
            {props.keepLabel}
          </Button>
          <Button type="submit" variant="danger" disabled={props.pending || reason.trim().length === 0}>
            {props.pending ? props.pendingLabel : props.submitLabel}
          </Button>
        </div>
      </form>
    </Dialog>
  );
}
