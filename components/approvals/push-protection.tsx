"use client";

import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { toast } from "sonner";
import { useTRPC } from "@/components/providers/trpc";
import { Button } from "@/components/ui/button";
import { RelativeTime } from "@/components/ui/time";
import { ReasonDialog } from "./reason-dialog";

// Push protection on the review screen: a patch in which secrets were found is shown redacted,
// with what was found (rule and count, never a value), and cannot be approved until an admin
// overrides with a reason; the override (who, when, why) is shown here once given.

export type PushProtectionView = {
  findings: { kind: string; name: string | null; count: number; reason: string }[];
  note: string;
  override: { by: string; at: string; reason: string } | null;
};

export function PushProtectionPanel(props: { approvalId: string; protection: PushProtectionView; canOverride: boolean; pending: boolean }) {
  const trpc = useTRPC();
  const qc = useQueryClient();
  const [open, setOpen] = useState(false);
  const override = useMutation(
    trpc.approvals.overridePushProtection.mutationOptions({
      onSuccess: async () => {
        toast.success("Push protection overridden; the reason is recorded");
        setOpen(false);
        await qc.invalidateQueries();
      },
      onError: (err) => toast.error(err.message),
    }),
  );
  const { findings, override: given } = props.protection;
  return (
    <section aria-label="Push protection" className="rounded-lg border border-red-300 bg-red-50 p-3 text-sm dark:border-red-900 dark:bg-red-950/40">
      <h2 className="font-medium text-red-800 dark:text-red-200">Push protection: this patch contains secrets</h2>
      <ul className="mt-1 list-disc pl-5" data-testid="push-protection-findings">
        {findings.map((f) => (
          <li key={`${f.kind}:${f.name ?? ""}`}>
            <span className="font-mono text-xs">{f.kind}{f.name ? `:${f.name}` : ""}</span> ×{f.count}: {f.reason}
          </li>
        ))}
      </ul>
      <p className="mt-2">
        The patch below is shown with those secrets masked. The digest names the original bytes, which are what would be pushed:
        pushing is refused unless an admin overrides with a reason.
      </p>
      {given ? (
        <p className="mt-2 font-medium" data-testid="push-protection-override">
          Overridden by {given.by} <RelativeTime date={given.at} />: {given.reason}
        </p>
      ) : props.pending && props.canOverride ? (
        <Button className="mt-2" size="sm" variant="danger" onClick={() => setOpen(true)}>
          Override push protection…
        </Button>
      ) : props.pending ? (
        <p className="mt-2">Only an admin of the repository can override it.</p>
      ) : null}
      <ReasonDialog
        open={open}
        onClose={() => setOpen(false)}
        title="Push a patch that contains secrets?"
        label="Reason (required, recorded and shown to everyone who reviews this)"
        keepLabel="Keep refusing"
        submitLabel="Override"
        pendingLabel="Overriding…"
        pending={override.isPending}
        onSubmit={(reason) => override.mutate({ approvalId: props.approvalId, reason })}
      />
    </section>
  );
}
