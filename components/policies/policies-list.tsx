"use client";

import { useQuery } from "@tanstack/react-query";
import Link from "next/link";
import { useTRPC } from "@/components/providers/trpc";
import { Badge } from "@/components/ui/badge";
import { formatRelative } from "@/components/ui/format";
import { reviewStatus, type PolicyListItem } from "./types";

// Every policy with its current version, rule count and what the checks say about it.

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
      {policies.error && <p role="alert" className="text-sm text-red-600">{policies.error.message}</p>}
      <div className="overflow-hidden rounded-lg border border-zinc-200 bg-white dark:border-zinc-800 dark:bg-zinc-900">
        <table className="w-full text-sm">
          <thead className="border-b border-zinc-200 bg-zinc-50 text-left text-xs text-zinc-500 uppercase dark:border-zinc-800 dark:bg-zinc-900/60">
            <tr>
              <th className="px-3 py-2 font-medium">Policy</th>
              <th className="px-3 py-2 font-medium">Version</th>
              <th className="px-3 py-2 text-right font-medium">Rules</th>
              <th className="px-3 py-2 font-medium">Checks</th>
              <th className="hidden px-3 py-2 text-right font-medium md:table-cell">Updated</th>
            </tr>
          </thead>
          <tbody data-testid="policies-table" className="divide-y divide-zinc-100 dark:divide-zinc-800">
            {policies.data?.map((p) => (
              <tr key={p.kind} className="hover:bg-zinc-50 dark:hover:bg-zinc-800/50">
                <td className="px-3 py-2">
                  <Link href={`/policies/${p.kind}`} className="font-medium text-zinc-900 hover:text-indigo-600 dark:text-zinc-100">
                    {p.name}
                  </Link>
                  <div className="text-xs text-zinc-500">
                    <span className="font-mono">{p.kind}</span> · decides about a {p.subject.replaceAll("_", " ")}
                  </div>
                </td>
                <td className="px-3 py-2 font-mono">v{p.version}</td>
                <td className="px-3 py-2 text-right tabular-nums">{p.ruleCount}</td>
                <td className="px-3 py-2">
                  <CheckSummary policy={p} />
                </td>
                <td className="hidden px-3 py-2 text-right text-xs text-zinc-500 md:table-cell" title={p.updatedAt.toISOString()}>
                  {formatRelative(p.updatedAt)}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </div>
  );
}
