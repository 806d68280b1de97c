"use client";

import { useMutation } from "@tanstack/react-query";
import { useFormContext } from "react-hook-form";
import { useTRPC } from "@/components/providers/trpc";
import { Badge, type BadgeProps } from "@/components/ui/badge";
import { Button } from "@/components/ui/button";
import { Alert } from "@/components/ui/alert";
import { Card } from "@/components/ui/card";
import { taskKindLabel } from "@/components/ui/format";
import { Table } from "@/components/ui/table";
import { RelativeTime } from "@/components/ui/time";
import type { DryRunOutcome } from "@/server/domain/evaluation/dry-run";
import { zTriggerRuleInput, type TriggerRuleFormValues } from "@/server/domain/triggers/forms/schemas";

// The dry run: the form's rule (saved or not) against recent deliveries and failed jobs, planned
// beside the repository's other rules exactly as the live trigger path plans them: the runs it
// would create, the ones the live path would drop as duplicates, where another rule takes
// precedence (and why), and why the others did not match.

const outcome: Record<DryRunOutcome, { label: string; tone: NonNullable<BadgeProps["tone"]> }> = {
  create: { label: "would create a run", tone: "success" },
  duplicate: { label: "duplicate: dropped", tone: "warning" },
  superseded: { label: "another rule wins", tone: "warning" },
  skipped: { label: "no match", tone: "muted" },
  refused: { label: "refused", tone: "danger" },
  unusable: { label: "unreadable", tone: "muted" },
};

export function DryRunPanel({ ruleId }: { ruleId: string | null }) {
  const trpc = useTRPC();
  const form = useFormContext<TriggerRuleFormValues>();
  const dryRun = useMutation(trpc.triggers.dryRun.mutationOptions());
  const run = async () => {
    if (!(await form.trigger())) return;
    const parsed = zTriggerRuleInput.safeParse(form.getValues());
    if (parsed.success) dryRun.mutate({ ruleId, rule: parsed.data });
  };
  const data = dryRun.data;
  const shown = data?.events.filter((e) => e.outcome !== "unusable") ?? [];
  const unusable = (data?.events.length ?? 0) - shown.length;
  return (
    <Card as="section" aria-label="Dry run" className="space-y-3">
      <div className="flex flex-wrap items-center justify-between gap-2">
        <div>
          <h2 className="text-sm font-semibold">Dry run</h2>
          <p className="text-xs text-zinc-500">Recent events matched against this rule as the live trigger path would, before you save. Nothing is written.</p>
        </div>
        <Button type="button" onClick={() => void run()} disabled={dryRun.isPending}>
          {dryRun.isPending ? "Running…" : "Dry run"}
        </Button>
      </div>
      {dryRun.error && <Alert>{dryRun.error.message}</Alert>}
      {data && (
        <div className="space-y-2" data-testid="dry-run-result">
          <p className="text-sm" aria-live="polite">
            {data.disabled && "The rule is disabled; once enabled, it would: "}
            <strong>{data.summary.create}</strong> run{data.summary.create === 1 ? "" : "s"} created, <strong>{data.summary.duplicate}</strong> duplicate
            {data.summary.duplicate === 1 ? "" : "s"} dropped, {data.summary.superseded} superseded by another rule, {data.summary.skipped} not matched, {data.summary.refused} refused, of {data.examined} recent events in{" "}
            {data.scope} ({data.otherKinds} of other kinds{unusable > 0 ? `, ${unusable} unreadable` : ""}).
          </p>
          {shown.length > 0 && (
            <Table columns={["Event", "Outcome", "Run", "Why"]} framed={false} density="dense">
              {shown.map((e) => (
                <tr key={e.ref.kind === "delivery" ? e.ref.deliveryId : e.ref.jobId} data-outcome={e.outcome}>
                  <td>
                    <span className="block max-w-64 truncate font-mono" title={e.label}>
                      {e.label}
                    </span>
                    <span className="text-zinc-500">
                      {e.repository} · <RelativeTime date={e.at} />
                    </span>
                  </td>
                  <td>
                    <Badge tone={outcome[e.outcome].tone}>{outcome[e.outcome].label}</Badge>
                  </td>
                  <td>
                    {e.candidate && (
                      <>
                        {taskKindLabel[e.candidate.taskKind]}, {e.candidate.action === "auto_run" ? "auto-run" : "suggestion"}
                        <span className="block max-w-56 truncate font-mono text-[10px] text-zinc-500" title={e.candidate.dedupeKey}>
                          {e.candidate.dedupeKey}
                        </span>
                      </>
                    )}
                  </td>
                  <td>
                    {e.duplicateOf && "runId" in e.duplicateOf ? (
                      <a href={`/runs/${e.duplicateOf.runId}`} className="text-indigo-700 hover:underline dark:text-indigo-400">
                        {e.reason}
                      </a>
                    ) : (
                      e.reason
                    )}
                    {e.precedence && <span className="block text-zinc-500" data-testid="dry-run-precedence">Precedence: {e.precedence}</span>}
                    {e.candidate?.keyVerdicts.map((v) => (
                      <span key={v.key} className="block text-zinc-500" data-testid="dry-run-key">
                        {v.matched ? "✓" : "✗"} {v.detail}
                      </span>
                    ))}
                    {e.candidate && e.candidate.gaps.length > 0 && (
                      <span className="block text-amber-700 dark:text-amber-400" data-testid="dry-run-gaps">
                        {e.candidate.gaps.length} readiness gap{e.candidate.gaps.length === 1 ? "" : "s"}, each an approval item: {e.candidate.gaps.map((g) => g.detail).join("; ")}
                      </span>
                    )}
                  </td>
                </tr>
              ))}
            </Table>
          )}
        </div>
      )}
    </Card>
  );
}
