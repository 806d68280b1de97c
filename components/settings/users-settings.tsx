"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import Link from "next/link";
import { toast } from "sonner";
import { useTRPC } from "@/components/providers/trpc";
import { Badge } from "@/components/ui/badge";
import { Button } from "@/components/ui/button";
import { AccountForm } from "./account-form";

// People (Airlock admins only): who has an account and how they came by it, their roles, and the
// invitations not yet used. Accounts come from here or from GitHub sign-in for invited people and
// members of the configured organisation; nobody signs themselves up.

const admittedLabel: Record<string, string> = { invitation: "invitation", admin: "created by an admin", github_org: "GitHub organisation", sign_up: "signed up" };
const stateTone = { open: "info", accepted: "success", revoked: "muted", expired: "warning" } as const;

const th = "px-3 py-2 font-medium";
const td = "px-3 py-2 align-top";

export function UsersSettings() {
  const trpc = useTRPC();
  const qc = useQueryClient();
  const users = useQuery(trpc.users.list.queryOptions());
  const invitations = useQuery(trpc.users.invitations.queryOptions());
  const repos = useQuery(trpc.repositorySettings.list.queryOptions());
  const refresh = () => Promise.all([qc.invalidateQueries({ queryKey: trpc.users.list.queryKey() }), qc.invalidateQueries({ queryKey: trpc.users.invitations.queryKey() })]);
  const onError = (e: { message: string }) => toast.error(e.message);
  const setAdmin = useMutation(trpc.users.setAdmin.mutationOptions({ onSuccess: (u) => { toast.success(`${u.email} is ${u.isAdmin ? "now" : "no longer"} an Airlock admin`); void refresh(); }, onError }));
  const revoke = useMutation(trpc.users.revokeInvitation.mutationOptions({ onSuccess: () => { toast.success("Invitation withdrawn"); void refresh(); }, onError }));
  const error = users.error ?? invitations.error;
  if (error) return <p role="alert" className="text-sm text-red-600">{error.message}</p>;
  const repoName = new Map((repos.data ?? []).map((r) => [r.id, r.fullName]));

  return (
    <div className="space-y-6">
      <div>
        <p className="text-sm"><Link href="/settings" className="text-indigo-700 hover:underline dark:text-indigo-400">Settings</Link> / People</p>
        <h1 className="text-xl font-semibold">People</h1>
        <p className="text-sm text-zinc-600 dark:text-zinc-400">
          Accounts are by invitation: invite a person by link or create their account here. GitHub sign-in admits invited people and, when configured, members of the organisation (with no role until you give one). Change a repository role on the repository&apos;s settings page.
        </p>
      </div>
      <AccountForm repos={(repos.data ?? []).map((r) => ({ id: r.id, fullName: r.fullName }))} onDone={refresh} />

      <section aria-label="Accounts" className="overflow-x-auto rounded-lg border border-zinc-200 bg-white dark:border-zinc-800 dark:bg-zinc-900">
        <table aria-label="Accounts" className="w-full text-left text-sm">
          <thead className="border-b border-zinc-200 text-xs text-zinc-500 dark:border-zinc-800">
            <tr><th scope="col" className={th}>Person</th><th scope="col" className={th}>Came by</th><th scope="col" className={th}>Signs in with</th><th scope="col" className={th}>Repository roles</th><th scope="col" className={th}>Airlock admin</th></tr>
          </thead>
          <tbody className="divide-y divide-zinc-100 dark:divide-zinc-800">
            {(users.data ?? []).map((u) => (
              <tr key={u.id}>
                <td className={td}>{u.name} <span className="text-xs text-zinc-500">{u.email}</span></td>
                <td className={td}>{u.admittedVia ? admittedLabel[u.admittedVia] ?? u.admittedVia : "seeded"}</td>
                <td className={td}>{u.signIn.join(", ") || "—"}</td>
                <td className={td}>
                  {u.roles.length === 0 ? <span className="text-zinc-500">none</span> : u.roles.map((r) => (
                    <Link key={r.repositoryId} href={`/settings/repositories/${r.repositoryId}`} className="mr-2 inline-block text-indigo-700 hover:underline dark:text-indigo-400">
                      {r.fullName} <Badge tone="neutral">{r.role}</Badge>
                    </Link>
                  ))}
                </td>
                <td className={td}>
                  <Button type="button" size="sm" variant={u.isAdmin ? "secondary" : "ghost"} disabled={setAdmin.isPending} aria-label={`${u.isAdmin ? "Remove" : "Give"} the Airlock admin role ${u.isAdmin ? "from" : "to"} ${u.email}`} onClick={() => setAdmin.mutate({ userId: u.id, isAdmin: !u.isAdmin })}>
                    {u.isAdmin ? "Remove admin" : "Make admin"}
                  </Button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </section>

      <section aria-label="Invitations" className="space-y-2">
        <h2 className="text-sm font-semibold">Invitations</h2>
        {invitations.data?.length === 0 ? (
          <p className="text-sm text-zinc-500">No invitations yet.</p>
        ) : (
          <div className="overflow-x-auto rounded-lg border border-zinc-200 bg-white dark:border-zinc-800 dark:bg-zinc-900">
            <table aria-label="Invitations" className="w-full text-left text-sm">
              <thead className="border-b border-zinc-200 text-xs text-zinc-500 dark:border-zinc-800">
                <tr><th scope="col" className={th}>Email</th><th scope="col" className={th}>State</th><th scope="col" className={th}>Expires</th><th scope="col" className={th}>Gives</th><th scope="col" className={th}>Invited by</th><th scope="col" className={th}><span className="sr-only">Actions</span></th></tr>
              </thead>
              <tbody className="divide-y divide-zinc-100 dark:divide-zinc-800">
                {(invitations.data ?? []).map((i) => (
                  <tr key={i.id}>
                    <td className={td}>{i.email}</td>
                    <td className={td}><Badge tone={stateTone[i.state]}>{i.state}</Badge></td>
                    <td className={td}><time dateTime={i.expiresAt.toISOString()}>{i.expiresAt.toISOString().slice(0, 16).replace("T", " ")}</time></td>
                    <td className={td}>{[i.isAdmin ? "Airlock admin" : null, ...i.roles.map((r) => `${r.role} of ${repoName.get(r.repositoryId) ?? "a removed repository"}`)].filter(Boolean).join(", ") || "no role"}</td>
                    <td className={td}>{i.invitedBy ?? "—"}</td>
                    <td className={`${td} text-right`}>
                      {i.state === "open" && (
                        <Button type="button" size="sm" variant="ghost" disabled={revoke.isPending} aria-label={`Withdraw the invitation for ${i.email}`} onClick={() => window.confirm(`Withdraw the invitation for ${i.email}? Its link stops working.`) && revoke.mutate({ invitationId: i.id })}>
                          Withdraw
                        </Button>
                      )}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </section>
    </div>
  );
}
