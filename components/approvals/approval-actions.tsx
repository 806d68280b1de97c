"use client";

import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { toast } from "sonner";
import { useTRPC } from "@/components/providers/trpc";
import { ActionButton } from "@/components/ui/action-button";
import { ReasonDialog } from "./reason-dialog";

// Approve (binding the artifact digest and head SHA shown), or reject with a required reason.
// Used by the review screen and the run view. The server decides; refusals are shown as told.

export function ApprovalActions(props: {
  approvalId: string;
  artifactDigest: string | null;
  headSha: string | null;
  disabledReason?: string | null;
  /** Why this viewer may reject but not approve (the two-person rule). */
  approveRefusal?: string | null;
  detail?: string | null;
  size?: "sm";
}) {
  const trpc = useTRPC();
  const qc = useQueryClient();
  const [rejecting, setRejecting] = useState(false);
  const refresh = () => qc.invalidateQueries();
  const approve = useMutation(
    trpc.approvals.approve.mutationOptions({
      onSuccess: async (result) => {
        // A privileged launch has no write-back: the run is dispatched with exactly what was approved.
        toast.success(result.writeBackId ? "Approved: the write-back is executing" : "Approved: the attempt is launching with exactly what you reviewed");
        await refresh();
      },
      onError: async (err) => {
        toast.error(err.message);
        await refresh();
      },
    }),
  );
  const reject = useMutation(
    trpc.approvals.reject.mutationOptions({
      onSuccess: async () => {
        toast.success("Rejected");
        setRejecting(false);
        await refresh();
      },
      onError: (err) => toast.error(err.message),
    }),
  );
  return (
    <div className="flex gap-2">
      <ActionButton
        size={props.size}
        variant="primary"
        disabledReason={props.disabledReason ?? props.approveRefusal ?? (approve.isPending ? "Approving…" : null)}
        detail={props.detail}
        onClick={() => approve.mutate({ approvalId: props.approvalId, artifactDigest: props.artifactDigest, headSha: props.headSha })}
      >
        Approve
      </ActionButton>
      <ActionButton size={props.size} variant="danger" disabledReason={props.disabledReason} detail={props.detail} onClick={() => setRejecting(true)}>
        Reject
      </ActionButton>
      <ReasonDialog
        open={rejecting}
        onClose={() => setRejecting(false)}
        title="Reject this write-back?"
        label="Reason (required)"
        keepLabel="Keep pending"
        submitLabel="Reject"
        pendingLabel="Rejecting…"
        pending={reject.isPending}
        onSubmit={(reason) => reject.mutate({ approvalId: props.approvalId, reason })}
      />
    </div>
  );
}
