"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import Link from "next/link";
import { useState } from "react";
import { toast } from "sonner";
import { useTRPC } from "@/components/providers/trpc";
import { Alert } from "@/components/ui/alert";
import { Badge } from "@/components/ui/badge";
import { Button } from "@/components/ui/button";
import { CopyButton } from "@/components/ui/copy-button";
import { RelativeTime } from "@/components/ui/time";

// API tokens for REST (/api/v1) and the CLI: make one for some repositories at a role no higher
// than yours (the server refuses more), see it once, revoke it; each row shows its last use.

const th = "px-3 py-2 font-medium";
const td = "px-3 py-2 align-top";
const field = "rounded border border-zinc-300 bg-white px-2 py-1 text-sm dark:border-zinc-700 dark:bg-zinc-900";
type Role = "viewer" | "maintainer" | "admin";

export function ApiTokensSettings() {
  const trpc = useTRPC();
  const qc = useQueryClient();
  const tokens = useQuery(trpc.apiTokens.list.queryOptions());
  const repos = useQuery(trpc.repositorySettings.list.queryOptions());
  const [name, setName] = useState("");
  const [kind, setKind] = useState<"personal" | "service">("personal");
  const [role, setRole] = useState<Role>("viewer");
  const [picked, setPicked] = useState<string[]>([]);
  const [shown, setShown] = useState<{ name: string; token: string } | null>(null);
  const refresh = () => qc.invalidateQueries({ queryKey: trpc.apiTokens.list.queryKey() });
  const create = useMutation(
    trpc.apiTokens.create.mutationOptions({
      onSuccess: (t) => {
        setShown({ name: t.name, token: t.token });
        setName("");
        setPicked([]);
        void refresh();
      },
      onError: (e) => toast.error(e.message),
    }),
  );
  const revoke = useMutation(trpc.apiTokens.revoke.mutationOptions({ onSuccess: () => { toast.success("Token revoked"); void refresh(); }, onError: (e) => toast.error(e.message) }));

  return (
    <div className="space-y-6">
      <div>
        <p className="text-sm"><Link href="/settings" className="text-indigo-700 hover:underline dark:text-indigo-400">Settings</Link> / API tokens</p>
        <h1 className="text-xl font-semibold">API tokens</h1>
        <p className="text-sm text-zinc-600 dark:text-zinc-400">
          For scripts, bots and the <code>airlock</code> CLI on the REST API (<Link prefetch={false} className="text-indigo-700 hover:underline dark:text-indigo-400" href="/api/v1/reference">reference</Link>). A token acts as you on the repositories it names, at most at its role and never above your own role there; every use is in the audit log. Service tokens are for automation and need the admin role on their repositories.
        </p>
      </div>

      {shown && (
        <Alert as="section" tone="info" variant="banner" role="status" aria-label="New token value" className="space-y-2 rounded-lg border p-3">
          <p className="font-medium">Copy {shown.name} now: it is shown only this once.</p>
          <p className="flex items-center gap-2"><code className="break-all rounded bg-white px-2 py-1 text-xs dark:bg-zinc-950" data-testid="new-token">{shown.token}</code><CopyButton value={shown.token} what="token" /></p>
          <Button type="button" size="sm" variant="secondary" onClick={() => setShown(null)}>Done</Button>
        </Alert>
      )}

      <form
        aria-label="New token"
        className="space-y-3 rounded-lg border border-zinc-200 bg-white p-3 dark:border-zinc-800 dark:bg-zinc-900"
        onSubmit={(e) => {
          e.preventDefault();
          create.mutate({ name, kind, role, repositoryIds: picked });
        }}
      >
        <h2 className="text-sm font-semibold">New token</h2>
        <div className="flex flex-wrap gap-3 text-sm">
          <label className="flex flex-col gap-1">Name<input className={field} value={name} maxLength={100} required onChange={(e) => setName(e.target.value)} /></label>
          <label className="flex flex-col gap-1">Kind
            <select className={field} value={kind} onChange={(e) => setKind(e.target.value as "personal" | "service")}><option value="personal">personal</option><option value="service">service</option></select>
          </label>
          <label className="flex flex-col gap-1">Role
            <select className={field} value={role} onChange={(e) => setRole(e.target.value as Role)}><option value="viewer">viewer (read)</option><option value="maintainer">maintainer (cancel, retry, approve)</option><option value="admin">admin</option></select>
          </label>
        </div>
        <fieldset className="text-sm">
          <legend className="mb-1">Repositories</legend>
          {(repos.data ?? []).length === 0 && <p className="text-zinc-500">You have no role on any repository.</p>}
          <div className="flex flex-wrap gap-3">
            {(repos.data ?? []).map((r) => (
              <label key={r.id} className="flex items-center gap-1">
                <input type="checkbox" checked={picked.includes(r.id)} onChange={(e) => setPicked(e.target.checked ? [...picked, r.id] : picked.filter((id) => id !== r.id))} />
                {r.fullName} <span className="text-xs text-zinc-500">({r.role ?? "no role"})</span>
              </label>
            ))}
          </div>
        </fieldset>
        <Button type="submit" size="sm" disabled={create.isPending || picked.length === 0 || name.trim() === ""}>Create token</Button>
      </form>

      {tokens.error && <Alert>{tokens.error.message}</Alert>}
      <section aria-label="Tokens" className="overflow-x-auto rounded-lg border border-zinc-200 bg-white dark:border-zinc-800 dark:bg-zinc-900">
        <table aria-label="Tokens" className="w-full text-left text-sm">
          <thead className="border-b border-zinc-200 text-xs text-zinc-500 dark:border-zinc-800">
            <tr><th scope="col" className={th}>Token</th><th scope="col" className={th}>Role and repositories</th><th scope="col" className={th}>Created</th><th scope="col" className={th}>Last used</th><th scope="col" className={th}></th></tr>
          </thead>
          <tbody className="divide-y divide-zinc-100 dark:divide-zinc-800">
            {(tokens.data ?? []).map((t) => (
              <tr key={t.id} className={t.revokedAt ? "text-zinc-400" : undefined}>
                <td className={td}>
                  {t.name} <Badge tone={t.kind === "service" ? "info" : "neutral"}>{t.kind}</Badge>
                  <div className="text-xs text-zinc-500"><code>{t.prefix}…</code> · {t.owner.email}</div>
                </td>
                <td className={td}><Badge tone="neutral">{t.role}</Badge> {t.repositories.map((r) => r.fullName ?? "(deleted repository)").join(", ")}</td>
                <td className={td}><RelativeTime date={t.createdAt} />{t.expiresAt && <div className="text-xs text-zinc-500">expires <RelativeTime date={t.expiresAt} /></div>}</td>
                <td className={td}>{t.lastUsedAt ? <RelativeTime date={t.lastUsedAt} /> : <span className="text-zinc-500">never</span>}</td>
                <td className={td}>
                  {t.revokedAt ? (
                    <span>revoked <RelativeTime date={t.revokedAt} /></span>
                  ) : (
                    <Button type="button" size="sm" variant="ghost" aria-label={`Revoke ${t.name}`} disabled={revoke.isPending} onClick={() => revoke.mutate({ tokenId: t.id })}>Revoke</Button>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
        {tokens.data?.length === 0 && <p className="px-3 py-2 text-sm text-zinc-500">No tokens yet.</p>}
      </section>
    </div>
  );
}
