"use client";

import { useQuery } from "@tanstack/react-query";
import Link from "next/link";
import { useState } from "react";
import { useTRPC } from "@/components/providers/trpc";
import { Badge } from "@/components/ui/badge";
import { Table } from "@/components/ui/table";
import { RelativeTime } from "@/components/ui/time";
import { useApprovalStream } from "./use-approval-stream";

// The approvals queue: pending first, oldest first, with counts and filters (repository,
// action, stack, age). Live over SSE, so a request appears and leaves without a reload; polls
// only while the stream is reconnecting.

export const approvalActions = ["push_commits", "update_pr_branch", "open_pr", "comment", "review", "approve_review", "rerun_workflow", "publish_release", "privileged_capability", "set_labels"] as const;
type Action = (typeof approvalActions)[number];
const ages = [
  { label: "any age", value: undefined },
  { label: "older than 1 hour", value: 60 },
  { label: "older than 1 day", value: 1440 },
] as const;

export const statusTone = (s: string) => (s === "pending" ? "warning" : s === "executed" ? "success" : s === "rejected" || s === "failed" ? "danger" : "neutral") as "warning" | "success" | "danger" | "neutral";

export function ApprovalsQueue() {
  const trpc = useTRPC();
  const [repositoryId, setRepositoryId] = useState<string | undefined>();
  const [action, setAction] = useState<Action | undefined>();
  const [stack, setStack] = useState("");
  const [olderThanMinutes, setOlder] = useState<number | undefined>();
  const filter = { repositoryId, action, stack: stack.trim() || undefined, olderThanMinutes };
  const live = useApprovalStream();
  const poll = live === "live" ? false : 5000;
  const list = useQuery({ ...trpc.approvals.list.queryOptions({ ...filter, limit: 100 }), refetchInterval: poll });
  const counts = useQuery({ ...trpc.approvals.counts.queryOptions(filter), refetchInterval: poll });
  const repos = useQuery(trpc.repositories.mine.queryOptions());
  const select = "rounded-md border border-zinc-300 bg-white px-2 py-1 text-sm dark:border-zinc-700 dark:bg-zinc-950";

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
        <select aria-label="Repository" className={select} value={repositoryId ?? ""} onChange={(e) => setRepositoryId(e.target.value || undefined)}>
          <option value="">All repositories</option>
          {(Array.isArray(repos.data) ? repos.data : []).map((r: { id: string; fullName: string }) => (
            <option key={r.id} value={r.id}>
              {r.fullName}
            </option>
          ))}
        </select>
        <select aria-label="Action" className={select} value={action ?? ""} onChange={(e) => setAction((e.target.value || undefined) as Action | undefined)}>
          <option value="">All actions</option>
          {approvalActions.map((a) => (
            <option key={a} value={a}>
              {a.replaceAll("_", " ")}
            </option>
          ))}
        </select>
        <input aria-label="Stack" placeholder="Stack name" className={select} value={stack} onChange={(e) => setStack(e.target.value)} />
        <select aria-label="Age" className={select} value={olderThanMinutes ?? ""} onChange={(e) => setOlder(e.target.value ? Number(e.target.value) : undefined)}>
          {ages.map((a) => (
            <option key={a.label} value={a.value ?? ""}>
              {a.label}
            </option>
          ))}
        </select>
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
