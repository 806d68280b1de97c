"use client";

import { useQuery } from "@tanstack/react-query";
import Link from "next/link";
import { useTRPC } from "@/components/providers/trpc";
import { Badge } from "@/components/ui/badge";
import { Alert } from "@/components/ui/alert";
import { Table, TableRow } from "@/components/ui/table";
import { RelativeTime } from "@/components/ui/time";
import { reviewStatus, type PolicyListItem } from "./types";

// Every policy with its current version, rule count and what the checks say about it.

const columns = ["Policy", "Version", { label: "Rules", className: "text-right" }, "Checks", { label: "Updated", className: "hidden text-right md:table-cell" }];

function CheckSummary({ policy }: { policy: PolicyListItem }) {
  const { review } = policy;
  const status = reviewStatus(review);
  if (status === "invalid") return <Badge tone="danger">{review.issues.length} model violations</Badge>;
  if (status === "unchecked") return <Badge tone="muted" title={review.checkError ?? undefined}>not checked</Badge>;
  const checks = review.checks;
  if (status === "ok" || !checks) return <Badge tone="success">no conflicts, gaps or vacuous rules</Badge>;
  return (
    <span className="flex flex-wrap gap-1">
      {checks.conflicts.length > 0 && <Badge tone="warning">{checks.conflicts.length} conflicts</Badge>}
      {checks.gaps.length > 0 && <Badge tone="warning">{checks.gaps.length} gaps</Badge>}
      {checks.vacuous.length > 0 && <Badge tone="warning">{checks.vacuous.length} vacuous</Badge>}
    </span>
  );
}

/** An edited shipped policy is never replaced by a newer build's text: say how it differs. */
function FromShipped({ diff }: { diff: NonNullable<PolicyListItem["fromShipped"]> }) {
  const parts = [
    diff.removed.length > 0 && `lacks ${diff.removed.join(", ")}`,
    diff.added.length > 0 && `adds ${diff.added.join(", ")}`,
    diff.changed.length > 0 && `changes ${diff.changed.join(", ")}`,
  ].filter(Boolean);
  return (
    <div className="mt-1 text-xs text-amber-700 dark:text-amber-400" data-testid="policy-from-shipped">
      Edited: differs from what Airlock ships{parts.length > 0 ? ` (${parts.join("; ")})` : ""}.
    </div>
  );
}

export function PoliciesList() {
  const trpc = useTRPC();
  const policies = useQuery(trpc.policies.list.queryOptions());
  return (
    <div className="space-y-4">
      <div>
        <h1 className="text-xl font-semibold">Policies</h1>
        <p className="text-sm text-zinc-500">
          Decisions are made by these rules, never by the agent, and each is stored with its proof.
        </p>
      </div>
      {policies.error && <Alert>{policies.error.message}</Alert>}
      <Table columns={columns} bodyTestId="policies-table">
        {policies.data?.map((p) => (
          <TableRow key={p.kind} interactive>
            <td>
              <Link href={`/policies/${p.kind}`} className="font-medium text-zinc-900 hover:text-indigo-600 dark:text-zinc-100">
                {p.name}
              </Link>
              <div className="text-xs text-zinc-500">
                <span className="font-mono">{p.kind}</span> · decides about a {p.subject.replaceAll("_", " ")}
              </div>
              {p.fromShipped && <FromShipped diff={p.fromShipped} />}
            </td>
            <td className="font-mono">v{p.version}</td>
            <td className="text-right tabular-nums">{p.ruleCount}</td>
            <td>
              <CheckSummary policy={p} />
            </td>
            <td className="hidden text-right text-xs text-zinc-500 md:table-cell">
              <RelativeTime date={p.updatedAt} />
            </td>
          </TableRow>
        ))}
      </Table>
    </div>
  );
}
