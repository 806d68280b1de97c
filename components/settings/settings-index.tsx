"use client";

import { useQuery } from "@tanstack/react-query";
import Link from "next/link";
import { useTRPC } from "@/components/providers/trpc";
import { Alert } from "@/components/ui/alert";
import { Badge } from "@/components/ui/badge";
import { Card } from "@/components/ui/card";
import { EmptyState } from "@/components/ui/empty-state";

// Settings: each repository the user can see (policy at a glance, their role), and the runner
// pools, service accounts and grants every run is admitted against.

export function SettingsIndex() {
  const trpc = useTRPC();
  const repos = useQuery(trpc.repositorySettings.list.queryOptions());
  const me = useQuery(trpc.users.me.queryOptions());
  return (
    <div className="space-y-6">
      <div>
        <h1 className="text-xl font-semibold">Settings</h1>
        <p className="text-sm text-zinc-600 dark:text-zinc-400">Repository policy and members; runner pools, service accounts and grants; people.</p>
      </div>
      {me.data?.isAdmin && (
        <Card as="section" aria-label="People">
          <h2 className="text-sm font-semibold">
            <Link href="/settings/users" className="text-indigo-700 hover:underline dark:text-indigo-400">People and invitations</Link>
          </h2>
          <p className="text-xs text-zinc-500">Accounts are by invitation: invite people by link or create their accounts, and give roles.</p>
        </Card>
      )}
      <Card as="section" aria-label="API tokens">
        <h2 className="text-sm font-semibold">
          <Link href="/settings/tokens" className="text-indigo-700 hover:underline dark:text-indigo-400">API tokens</Link>
        </h2>
        <p className="text-xs text-zinc-500">Tokens for the REST API and the <code>airlock</code> CLI, scoped to repositories and a role; shown once, revocable.</p>
      </Card>
      {me.data?.isAdmin && (
        <Card as="section" aria-label="GitHub">
          <h2 className="text-sm font-semibold">
            <Link href="/settings/github" className="text-indigo-700 hover:underline dark:text-indigo-400">GitHub App</Link>
          </h2>
          <p className="text-xs text-zinc-500">Create Airlock&apos;s GitHub App (or enter an existing one); its installations register repositories.</p>
        </Card>
      )}
      <Card as="section" aria-label="Runner pools and grants">
        <h2 className="text-sm font-semibold">
          <Link href="/settings/pools" className="text-indigo-700 hover:underline dark:text-indigo-400">Runner pools, service accounts and grants</Link>
        </h2>
        <p className="text-xs text-zinc-500">Trust tiers, concurrency, task kinds, and which secrets and ConfigMaps each stack may receive (names only). Airlock admins change them.</p>
      </Card>
      <section aria-label="Repositories" className="space-y-2">
        <div className="flex items-baseline gap-3">
          <h2 className="text-sm font-semibold">
            <Link href="/settings/repositories" className="text-indigo-700 hover:underline dark:text-indigo-400">Repositories</Link>
          </h2>
          <span className="text-xs text-zinc-500">
            {me.data?.isAdmin ? "Add a repository (from the GitHub App, by GitHub URL, or a new local one), edit, disable or remove it there." : "Forge, visibility, trust tier, state and last delivery of each."}
          </span>
        </div>
        {repos.error && <Alert>{repos.error.message}</Alert>}
        <Card as="ul" padding="none" className="divide-y divide-zinc-100 dark:divide-zinc-800">
          {(repos.data ?? []).map((r) => (
            <li key={r.id} className="flex flex-wrap items-center gap-3 px-3 py-2 text-sm">
              <Link href={`/settings/repositories/${r.id}`} className="font-medium text-indigo-700 hover:underline dark:text-indigo-400">{r.fullName}</Link>
              <Badge tone="muted">{r.forge}</Badge>
              {r.disabledAt && <Badge tone="warning" title={r.disabledReason ?? undefined}>disabled</Badge>}
              <Badge tone="neutral">{r.role ?? "no role"}</Badge>
              <span className="text-xs text-zinc-500">
                auto-run {r.autoRunOnFailedCheck ? "on" : "off"} · bot comments {r.botCommentsAllowed ? "allowed" : "off"} · {r.writeBackExceptions.length} write-back exception
                {r.writeBackExceptions.length === 1 ? "" : "s"} · {r._count.memberships} members · {r._count.triggerRules} rules
              </span>
            </li>
          ))}
        </Card>
        {repos.data?.length === 0 && <EmptyState size="inline">You have no role on any repository yet: an Airlock admin gives roles. Until then you see your own profile and nothing else.</EmptyState>}
      </section>
    </div>
  );
}
