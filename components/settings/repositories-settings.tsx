"use client";

import { useQuery } from "@tanstack/react-query";
import Link from "next/link";
import { useState } from "react";
import { useTRPC } from "@/components/providers/trpc";
import { Alert } from "@/components/ui/alert";
import { Badge } from "@/components/ui/badge";
import { Button } from "@/components/ui/button";
import { EmptyState } from "@/components/ui/empty-state";
import { Table, TableRow } from "@/components/ui/table";
import { RelativeTime } from "@/components/ui/time";
import { AddRepositoryDialog } from "./add-repository-dialog";

// Settings → Repositories: every repository the user has a role on (an Airlock admin: all), with
// its forge, visibility, trust tier, whether it is enabled (and why not), members and its last
// delivery. Airlock admins add repositories here; each row opens the repository's settings.

const COLUMNS = ["Repository", "Forge", "Visibility", "Trust tier", "State", "Members", "Last delivery", "Your role"] as const;

export function RepositoriesSettings() {
  const trpc = useTRPC();
  const repos = useQuery(trpc.repositorySettings.list.queryOptions());
  const me = useQuery(trpc.users.me.queryOptions());
  const [adding, setAdding] = useState(false);
  const rows = repos.data ?? [];
  return (
    <div className="space-y-4">
      <div className="flex flex-wrap items-end justify-between gap-2">
        <div>
          <p className="text-sm">
            <Link href="/settings" className="text-indigo-700 underline dark:text-indigo-400">Settings</Link> / Repositories
          </p>
          <h1 className="text-xl font-semibold">Repositories</h1>
          <p className="text-sm text-zinc-600 dark:text-zinc-400">
            What Airlock acts on. A disabled repository dispatches nothing and its deliveries are ignored. Deliveries for a repository not listed here are ignored as not registered (see{" "}
            <Link href="/deliveries?outcome=ignored" className="text-indigo-700 underline dark:text-indigo-400">Deliveries</Link>).
          </p>
        </div>
        {me.data?.isAdmin && (
          <Button variant="primary" onClick={() => setAdding(true)}>
            Add repository
          </Button>
        )}
      </div>
      {repos.error && <Alert>{repos.error.message}</Alert>}
      <Table
        columns={COLUMNS}
        aria-label="Repositories"
        bodyTestId="repositories-table"
        empty={
          repos.data && rows.length === 0 ? (
            <EmptyState size="inline">
              {me.data?.isAdmin ? "No repositories yet: add one." : "You have no role on any repository yet: an Airlock admin gives roles."}
            </EmptyState>
          ) : undefined
        }
      >
        {rows.map((r) => (
          <TableRow key={r.id} data-repository={r.fullName}>
            <td>
              <Link href={`/settings/repositories/${r.id}`} className="font-medium text-indigo-700 hover:underline dark:text-indigo-400">{r.fullName}</Link>
              <div className="text-xs text-zinc-500">default branch {r.defaultBranch}</div>
            </td>
            <td><Badge tone="muted">{r.forge}</Badge></td>
            <td>{r.visibility}</td>
            <td><Badge tone={r.trustTier === "trusted" ? "success" : "warning"}>{r.trustTier}</Badge></td>
            <td>
              {r.disabledAt ? (
                <div>
                  <Badge tone="warning">disabled</Badge>
                  <div className="max-w-xs text-xs text-zinc-600 dark:text-zinc-400">
                    {r.disabledBy === "installation" ? "by the GitHub App's installation" : "by an admin"}: {r.disabledReason ?? "no reason given"}
                  </div>
                </div>
              ) : (
                <Badge tone="success">enabled</Badge>
              )}
            </td>
            <td className="tabular-nums">{r._count.memberships}</td>
            <td className="text-xs">
              {r.lastDelivery ? (
                <Link href={`/deliveries?delivery=${encodeURIComponent(r.lastDelivery.deliveryId)}`} className="text-indigo-700 hover:underline dark:text-indigo-400">
                  {r.lastDelivery.event} · {r.lastDelivery.outcome} · <RelativeTime date={r.lastDelivery.receivedAt} />
                </Link>
              ) : (
                <span className="text-zinc-500">none in 30 days</span>
              )}
            </td>
            <td><Badge tone="neutral">{r.role ?? "no role"}</Badge></td>
          </TableRow>
        ))}
      </Table>
      {me.data?.isAdmin && <AddRepositoryDialog open={adding} onClose={() => setAdding(false)} />}
    </div>
  );
}
