"use client";

import { useQuery, useQueryClient } from "@tanstack/react-query";
import { useEffect, useRef } from "react";
import { ProofTree } from "@/components/policies/proof-tree";
import { useTRPC } from "@/components/providers/trpc";
import { Alert } from "@/components/ui/alert";
import { Badge } from "@/components/ui/badge";
import { LoadingRegion, SkeletonLines } from "@/components/ui/skeleton";
import { Empty, Section } from "./section";

// The run's policy decisions with their proofs: the CI triage that led to the run (and what
// triage did about it), runner selection, the change gate. One ProofTree rendering for all.

const policyTitle: Record<string, string> = {
  ci_triage: "CI triage",
  runner_selection: "Runner selection",
  change_gate: "Change gate",
};

const actionLabel: Record<string, string> = {
  rerun_check: "check rerun",
  dispatch_runs: "runs dispatched",
  notify_owner: "owner notified",
  roll_back_request: "roll-back requested",
};

export function PolicyDecisions({ runId, lastEventSeq }: { runId: string; lastEventSeq: number }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const decisions = useQuery(trpc.proofs.byRun.queryOptions({ runId }));
  const triage = useQuery(trpc.triage.byRun.queryOptions({ runId }));
  // A triage decision linked to a sibling run of the same failure is not among this run's own.
  const triageDecisionId = triage.data?.policyDecisionId ?? null;
  const linked = decisions.data?.some((d) => d.id === triageDecisionId) ?? true;
  const shared = useQuery({ ...trpc.proofs.byId.queryOptions({ decisionId: triageDecisionId ?? "" }), enabled: triageDecisionId !== null && !linked });
  const all = shared.data && !linked ? [shared.data, ...(decisions.data ?? [])] : decisions.data;
  // New events may mean new decisions (the worker's runner selection, a write-back's gate).
  const seen = useRef(lastEventSeq);
  useEffect(() => {
    if (seen.current === lastEventSeq) return;
    seen.current = lastEventSeq;
    void queryClient.invalidateQueries({ queryKey: trpc.proofs.byRun.queryKey({ runId }) });
    void queryClient.invalidateQueries({ queryKey: trpc.triage.byRun.queryKey({ runId }) });
  }, [queryClient, trpc, runId, lastEventSeq]);

  return (
    <Section title="Policy decisions">
      {triage.data && (
        <div data-testid="run-triage" className="mb-2 space-y-1 text-sm">
          <p className="flex flex-wrap items-center gap-1.5">
            <span>Triage</span>
            <Badge tone={triage.data.disposition === "fix_forward" ? "success" : triage.data.disposition === "rerun_once" ? "progress" : "warning"}>
              {triage.data.disposition.replaceAll("_", " ")}
            </Badge>
            <span className="text-xs text-zinc-600 dark:text-zinc-400">
              {actionLabel[triage.data.action] ?? triage.data.action} · {triage.data.actionStatus.replaceAll("_", " ")}
            </span>
          </p>
          <p className="text-xs break-words text-zinc-700 dark:text-zinc-300">{triage.data.actionDetail}</p>
          {triage.data.refusal && <p className="text-xs text-amber-700 dark:text-amber-400">Fail-closed: {triage.data.refusal}</p>}
        </div>
      )}
      {decisions.isPending ? (
        <LoadingRegion label="Loading the decisions">
          <SkeletonLines lines={3} />
        </LoadingRegion>
      ) : decisions.error ? (
        <Alert>{decisions.error.message}</Alert>
      ) : !all || all.length === 0 ? (
        <Empty>No policy decision yet.</Empty>
      ) : (
        <ul className="space-y-2">
          {all.map((d) => {
            const kind = d.decision.policy.kind;
            return (
              <li key={d.id}>
                <details open={kind === "ci_triage"} data-testid={`decision-${kind}`}>
                  <summary className="cursor-pointer text-sm">
                    <span className="font-medium">{policyTitle[kind] ?? d.policyName}</span>{" "}
                    <span className="font-mono text-xs break-all">
                      {d.decision.property} = {String(d.decision.value)}
                    </span>
                  </summary>
                  <ProofTree decision={d.decision} className="mt-1.5" />
                </details>
              </li>
            );
          })}
        </ul>
      )}
    </Section>
  );
}
