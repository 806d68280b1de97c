"use client";

import { useMutation } from "@tanstack/react-query";
import { useRef } from "react";
import { toast } from "sonner";
import { useTRPC } from "@/components/providers/trpc";
import { ActionButton } from "@/components/ui/action-button";
import { Card } from "@/components/ui/card";
import { CopyButton } from "@/components/ui/copy-button";

// "Run check": the local CI runs the repository's check command at the tip of its default branch,
// as a push would; a failure goes through ingest and the trigger rules like any other. One
// request id per click, kept until a request succeeds, so a retry never queues a second run.

export function LocalCiSection({
  repositoryId,
  defaultBranch,
  checkCommand,
  runCheck,
}: {
  repositoryId: string;
  defaultBranch: string;
  checkCommand: string | null;
  runCheck: { allowed: boolean; reason: string | null };
}) {
  const trpc = useTRPC();
  const requestId = useRef<string | null>(null);
  const mutation = useMutation(
    trpc.repositorySettings.runCheck.mutationOptions({
      onSuccess: (res) => toast.success(res.queued ? `Check queued on ${res.branch}: the local CI runs it now` : `Already queued on ${res.branch}`),
      onError: (err) => toast.error(`Check not queued: ${err.message}`),
    }),
  );
  const run = () => {
    requestId.current ??= crypto.randomUUID();
    mutation.mutate(
      { repositoryId, requestId: requestId.current, branch: "" },
      {
        // A failed request keeps its id: clicking again may repeat one that did reach the server.
        onSuccess: () => {
          requestId.current = null;
        },
      },
    );
  };
  return (
    <Card as="section" aria-label="Local CI" className="space-y-2">
      <div className="flex flex-wrap items-center justify-between gap-3">
        <div>
          <h2 className="text-sm font-semibold">Local CI</h2>
          <p className="text-xs text-zinc-500">
            {checkCommand ? (
              <>
                Runs <code className="font-mono">{checkCommand}</code> <CopyButton value={checkCommand} what="check command" className="size-5 align-middle" /> at the tip of <span className="font-mono">{defaultBranch}</span>; a failure fires the trigger rules.
              </>
            ) : (
              "No check command is configured for the local CI."
            )}
          </p>
        </div>
        <ActionButton size="sm" variant="primary" disabledReason={runCheck.reason ?? (mutation.isPending ? "Queuing…" : null)} onClick={run}>
          Run check
        </ActionButton>
      </div>
    </Card>
  );
}
