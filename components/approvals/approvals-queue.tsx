"use client";

import { useQuery } from "@tanstack/react-query";
import Link from "next/link";
import { useQueryStates } from "nuqs";
import { useTRPC } from "@/components/providers/trpc";
import { Badge } from "@/components/ui/badge";
import { FilterInput, FilterSelect } from "@/components/ui/filter-controls";
import { Table } from "@/components/ui/table";
import { RelativeTime } from "@/components/ui/time";
import { approvalActions, approvalAges, approvalFilterParsers, approvalsFilterInput } from "./filters";
import { useApprovalStream } from "./use-approval-stream";

// The approvals queue: pending first, oldest first, with counts and filters (repository,
// action, stack, age). Live over SSE, so a request appears and leaves without a reload; polls
// only while the stream is reconnecting.

export const statusTone = (s: string) => (s === "pending" ? "warning" : s === "executed" ? "success" : s === "rejected" || s === "failed" ? "danger" : "neutral") as "warning" | "success" | "danger" | "neutral";

export function ApprovalsQueue() {
  const trpc = useTRPC();
  const [values, setFilters] = useQueryStates(approvalFilterParsers, { history: "push" });
  const filter = approvalsFilterInput(values);
  const live = useApprovalStream();
  const poll = live === "live" ? false : 5000;
  const list = useQuery({ ...trpc.approvals.list.queryOptions({ ...filter, limit: 100 }), refetchInterval: poll });
  const counts = useQuery({ ...trpc.approvals.counts.queryOptions(filter), refetchInterval: poll });
  const repos = useQuery(trpc.repositories.mine.queryOptions());

  return (
    <div className="space-y-4">
      <header className="flex flex-wrap items-baseline justify-between gap-2">
        <h1 className="text-xl font-semibold">Approvals</h1>
        <span className="text-xs text-zinc-600 dark:text-zinc-400" data-testid="approvals-live">
          {live === "live" ? "live" : "reconnecting…"}
        </span>
        <p className="text-sm text-zinc-600 dark:text-zinc-400" aria-live="polite">
          <span data-testid="pending-count">{counts.data?.pending ?? 0}</span> pending · {counts.data?.executed ?? 0} executed · {counts.data?.rejected ?? 0} rejected · {counts.data?.expired ?? 0} expired · {counts.data?.failed ?? 0} failed
        </p>
      </header>
      <div className="flex flex-wrap gap-2" role="group" aria-label="Filters">
        <FilterSelect label="Repository" allLabel="All repositories" value={values.repositoryId} onChange={(repositoryId) => void setFilters({ repositoryId })} options={(repos.data ?? []).map((r) => ({ value: r.id, label: r.fullName }))} />
        <FilterSelect label="Action" allLabel="All actions" value={values.action} onChange={(action) => void setFilters({ action })} options={approvalActions.map((a) => ({ value: a, label: a.replaceAll("_", " ") }))} />
        <FilterInput aria-label="Stack" placeholder="Stack name" value={values.stack} onCommit={(stack) => void setFilters({ stack }, { history: "replace" })} />
        <FilterSelect label="Age" allLabel="any age" value={values.age} onChange={(age) => void setFilters({ age })} options={approvalAges} />
      </div>
      <Table columns={["Action", "Target", "Run", "Stack", "Requested", "Status"]} empty={list.data && list.data.length === 0 ? "Nothing waits for approval." : null}>
        {(list.data ?? []).map((a) => (
          <tr key={a.id}>
            <td>
              <Link href={`/approvals/${a.id}`} className="text-indigo-600 hover:underline dark:text-indigo-400">
                {a.action.replaceAll("_", " ")}
              </Link>
            </td>
            <td className="font-mono text-xs">
              {a.run.repository.fullName} {[a.targetBranch, a.targetPrNumber && `#${a.targetPrNumber}`, a.targetCheck].filter(Boolean).join(" ")}
            </td>
            <td>
              <Link href={`/runs/${a.run.id}`} className="hover:underline">
                #{a.run.number} {a.run.title}
              </Link>
            </td>
            <td className="text-xs">{a.stackName ?? "—"}</td>
            <td className="text-xs">
              <RelativeTime date={a.createdAt} />
            </td>
            <td>
              <Badge tone={statusTone(a.status)}>{a.expired ? "expired" : a.status}</Badge>
            </td>
          </tr>
        ))}
      </Table>
    </div>
  );
}
