"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import Link from "next/link";
import { useState } from "react";
import { toast } from "sonner";
import { ReadOnlyNote } from "@/components/forms/form-status";
import { DetailPageSkeleton } from "@/components/layout/page-skeletons";
import { useTRPC } from "@/components/providers/trpc";
import { Alert } from "@/components/ui/alert";
import { Badge } from "@/components/ui/badge";
import { Button } from "@/components/ui/button";
import { Table } from "@/components/ui/table";
import { taskKindLabel } from "@/components/ui/format";
import {
  configGrantSchema,
  secretGrantSchema,
  poolSandboxDefaults,
  zRunnerPoolInput,
  zServiceAccountInput,
  type ConfigGrantFormValues,
  type RunnerPoolFormValues,
  type SecretGrantFormValues,
  type ServiceAccountFormValues,
} from "@/server/domain/pools/forms/schemas";
import { DialogForm } from "./dialog-form";
import { ConfigGrantFields, PoolFields, PoolSandboxSummary, SecretGrantFields, ServiceAccountFields } from "./pool-fields";

// Runner pools, service accounts, and Secret and ConfigMap grants (names only, never values),
// with the pools and task kinds each grant reaches. Airlock admins change them; everyone else
// sees the same page read-only.

type Editing =
  | { kind: "pool"; id: string | null; version: number | null; values: RunnerPoolFormValues }
  | { kind: "account"; id: string | null; version: number | null; values: ServiceAccountFormValues }
  | { kind: "secret"; id: string | null; version: number | null; values: SecretGrantFormValues }
  | { kind: "config"; id: string | null; version: number | null; values: ConfigGrantFormValues };

function Receivers({ receivers }: { receivers: { pool: string; trustTier: string; taskKinds: string[] }[] }) {
  if (receivers.length === 0) return <span className="text-xs text-zinc-500">no pool</span>;
  return (
    <ul className="space-y-0.5 text-xs">
      {receivers.map((r) => (
        <li key={r.pool}>
          <span className="font-mono">{r.pool}</span> <Badge tone={r.trustTier === "trusted" ? "success" : "warning"}>{r.trustTier}</Badge>: {r.taskKinds.map((k) => taskKindLabel[k] ?? k).join(", ")}
        </li>
      ))}
    </ul>
  );
}

export function PoolSettings() {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const settings = useQuery(trpc.pools.settings.queryOptions());
  const [editing, setEditing] = useState<Editing | null>(null);
  const refresh = () => queryClient.invalidateQueries({ queryKey: trpc.pools.settings.queryKey() });
  const m = {
    createPool: useMutation(trpc.pools.createPool.mutationOptions()),
    updatePool: useMutation(trpc.pools.updatePool.mutationOptions()),
    createAccount: useMutation(trpc.pools.createServiceAccount.mutationOptions()),
    updateAccount: useMutation(trpc.pools.updateServiceAccount.mutationOptions()),
    createSecret: useMutation(trpc.pools.createSecretGrant.mutationOptions()),
    updateSecret: useMutation(trpc.pools.updateSecretGrant.mutationOptions()),
    createConfig: useMutation(trpc.pools.createConfigGrant.mutationOptions()),
    updateConfig: useMutation(trpc.pools.updateConfigGrant.mutationOptions()),
  };
  const deleteGrant = useMutation(
    trpc.pools.deleteGrant.mutationOptions({ onSuccess: () => { toast.success("Grant revoked"); void refresh(); }, onError: (e) => toast.error(e.message) }),
  );

  if (settings.isPending) return <DetailPageSkeleton label="Loading the runner pools" panels={4} />;
  if (settings.error) return <Alert>{settings.error.message}</Alert>;
  const s = settings.data;
  const canEdit = s.canEdit;
  const close = () => setEditing(null);
  const done = async (message: string) => {
    await refresh();
    return message;
  };
  const ref = (id: string | null, v: number | null) => ({ id: id ?? "", expectedVersion: v ?? 1 });
  const add = (label: string, next: Editing) => (
    <Button type="button" size="sm" disabled={!canEdit.allowed} title={canEdit.reason ?? undefined} onClick={() => setEditing(next)}>
      {label}
    </Button>
  );

  return (
    <div className="space-y-8">
      <header className="space-y-1">
        <div className="text-sm text-zinc-500"><Link href="/settings" className="hover:underline">Settings</Link> / runner pools and grants</div>
        <h1 className="text-xl font-semibold">Runner pools, service accounts and grants</h1>
      </header>
      {!canEdit.allowed && <ReadOnlyNote reason={canEdit.reason} />}

      <section aria-label="Runner pools" className="space-y-2">
        <div className="flex items-center justify-between"><h2 className="text-sm font-semibold">Runner pools</h2>{add("Add pool", { kind: "pool", id: null, version: null, values: { name: "", trustTier: "trusted", kind: "local", concurrency: 2, allowedTaskKinds: [], runtimeServiceAccountId: "", runnerServiceAccountId: "", ...poolSandboxDefaults } })}</div>
        <Table aria-label="Runner pools" className="[&_td]:align-top" columns={["Pool", "Trust tier", "Kind", "Concurrency", "Task kinds", "Sandbox", "Service accounts", { label: "Actions", srOnly: true }]}>
          {s.pools.map((p) => (
            <tr key={p.id}>
              <td className="font-mono">{p.name} <Badge tone="muted">v{p.version}</Badge></td>
              <td><Badge tone={p.trustTier === "trusted" ? "success" : "warning"}>{p.trustTier}</Badge></td>
              <td>{p.kind}</td>
              <td>{p.concurrency}</td>
              <td className="text-xs">{p.allowedTaskKinds.length === 0 ? "every kind" : p.allowedTaskKinds.map((k) => taskKindLabel[k]).join(", ")}</td>
              <td className="text-xs">
                <PoolSandboxSummary pool={p} />
              </td>
              <td className="font-mono text-xs">runtime {p.runtimeServiceAccount.name}{p.runtimeServiceAccount.privileged && " (privileged)"}<br />runner {p.runnerServiceAccount.name}</td>
              <td>
                <Button type="button" size="sm" variant="ghost" aria-label={`${canEdit.allowed ? "Edit" : "View"} pool ${p.name}`} onClick={() => setEditing({ kind: "pool", id: p.id, version: p.version, values: { name: p.name, trustTier: p.trustTier, kind: p.kind, concurrency: p.concurrency, allowedTaskKinds: p.allowedTaskKinds, runtimeServiceAccountId: p.runtimeServiceAccountId, runnerServiceAccountId: p.runnerServiceAccountId, networkMode: p.networkMode, allowedHosts: p.allowedHosts, memoryLimitMb: p.memoryLimitMb, processLimit: p.processLimit, cpuLimitSeconds: p.cpuLimitSeconds, diskLimitMb: p.diskLimitMb, allowUnsandboxed: p.allowUnsandboxed } })}>
                  {canEdit.allowed ? "Edit" : "View"}
                </Button>
              </td>
            </tr>
          ))}
        </Table>
      </section>

      <section aria-label="Service accounts" className="space-y-2">
        <div className="flex items-center justify-between"><h2 className="text-sm font-semibold">Service accounts</h2>{add("Add service account", { kind: "account", id: null, version: null, values: { name: "", namespace: "airlock", privileged: false, description: "" } })}</div>
        <Table aria-label="Service accounts" className="[&_td]:align-top" columns={["Account", "Privileged", "Used by", "Description", { label: "Actions", srOnly: true }]}>
          {s.serviceAccounts.map((a) => (
            <tr key={a.id}>
              <td className="font-mono text-xs">{a.namespace}/{a.name}</td>
              <td>{a.privileged ? <Badge tone="warning">privileged</Badge> : <Badge tone="muted">no</Badge>}</td>
              <td className="font-mono text-xs">{a.usedBy.join(", ") || "—"}</td>
              <td className="max-w-md text-xs text-zinc-600 dark:text-zinc-400">{a.description}</td>
              <td>
                <Button type="button" size="sm" variant="ghost" aria-label={`${canEdit.allowed ? "Edit" : "View"} service account ${a.name}`} onClick={() => setEditing({ kind: "account", id: a.id, version: a.version, values: { name: a.name, namespace: a.namespace, privileged: a.privileged, description: a.description } })}>
                  {canEdit.allowed ? "Edit" : "View"}
                </Button>
              </td>
            </tr>
          ))}
        </Table>
      </section>

      <section aria-label="Secret grants" className="space-y-2">
        <div className="flex items-center justify-between"><h2 className="text-sm font-semibold">Secret grants</h2>{add("Grant a secret", { kind: "secret", id: null, version: null, values: { secretName: "", stackId: "", privileged: false, trustedPoolsOnly: true, poolScope: "trust_tier", poolIds: [], taskKinds: [] } })}</div>
        <Table aria-label="Secret grants" className="[&_td]:align-top" columns={["Secret", "Stack", "Privileged", "Pools and task kinds that may receive it", { label: "Actions", srOnly: true }]}>
          {s.secretGrants.map((g) => (
            <tr key={g.id}>
              <td className="font-mono text-xs">{g.secretName}</td>
              <td className="text-xs">{g.stackName ?? "every stack"}</td>
              <td>{g.privileged ? <Badge tone="warning">privileged</Badge> : <Badge tone="muted">no</Badge>}</td>
              <td><Receivers receivers={g.receivers} /></td>
              <td className="whitespace-nowrap">
                <Button type="button" size="sm" variant="ghost" aria-label={`${canEdit.allowed ? "Edit" : "View"} grant of ${g.secretName}`} onClick={() => setEditing({ kind: "secret", id: g.id, version: g.version, values: { secretName: g.secretName, stackId: g.stackId ?? "", privileged: g.privileged, trustedPoolsOnly: g.trustedPoolsOnly, poolScope: g.poolScope, poolIds: g.poolIds, taskKinds: g.taskKinds } })}>
                  {canEdit.allowed ? "Edit" : "View"}
                </Button>
                {canEdit.allowed && <Button type="button" size="sm" variant="ghost" aria-label={`Revoke grant of ${g.secretName}`} onClick={() => window.confirm(`Revoke ${g.secretName}?`) && deleteGrant.mutate({ kind: "secret", id: g.id, expectedVersion: g.version })}>Revoke</Button>}
              </td>
            </tr>
          ))}
        </Table>
      </section>

      <section aria-label="ConfigMap grants" className="space-y-2">
        <div className="flex items-center justify-between"><h2 className="text-sm font-semibold">ConfigMap grants</h2>{add("Grant a ConfigMap", { kind: "config", id: null, version: null, values: { configMapName: "", stackId: "", trustedPoolsOnly: false, poolScope: "trust_tier", poolIds: [], taskKinds: [] } })}</div>
        <Table aria-label="ConfigMap grants" className="[&_td]:align-top" columns={["ConfigMap", "Stack", "Pools and task kinds that may receive it", { label: "Actions", srOnly: true }]}>
          {s.configGrants.map((g) => (
            <tr key={g.id}>
              <td className="font-mono text-xs">{g.configMapName}</td>
              <td className="text-xs">{g.stackName ?? "every stack"}</td>
              <td><Receivers receivers={g.receivers} /></td>
              <td className="whitespace-nowrap">
                <Button type="button" size="sm" variant="ghost" aria-label={`${canEdit.allowed ? "Edit" : "View"} grant of ${g.configMapName}`} onClick={() => setEditing({ kind: "config", id: g.id, version: g.version, values: { configMapName: g.configMapName, stackId: g.stackId ?? "", trustedPoolsOnly: g.trustedPoolsOnly, poolScope: g.poolScope, poolIds: g.poolIds, taskKinds: g.taskKinds } })}>
                  {canEdit.allowed ? "Edit" : "View"}
                </Button>
                {canEdit.allowed && <Button type="button" size="sm" variant="ghost" aria-label={`Revoke grant of ${g.configMapName}`} onClick={() => window.confirm(`Revoke ${g.configMapName}?`) && deleteGrant.mutate({ kind: "config", id: g.id, expectedVersion: g.version })}>Revoke</Button>}
              </td>
            </tr>
          ))}
        </Table>
      </section>

      {editing?.kind === "pool" && (
        <DialogForm title={editing.id ? `Pool ${editing.values.name}` : "New runner pool"} open onClose={close} schema={zRunnerPoolInput} defaults={editing.values} version={editing.version} canEdit={canEdit}
          save={async (v, ev) => done(editing.id ? `Saved pool ${(await m.updatePool.mutateAsync({ ...v, ...ref(editing.id, ev) })).name}` : `Created pool ${(await m.createPool.mutateAsync(v)).name}`)}>
          <PoolFields accounts={s.serviceAccounts} />
        </DialogForm>
      )}
      {editing?.kind === "account" && (
        <DialogForm title={editing.id ? `Service account ${editing.values.name}` : "New service account"} open onClose={close} schema={zServiceAccountInput} defaults={editing.values} version={editing.version} canEdit={canEdit}
          save={async (v, ev) => done(editing.id ? `Saved ${(await m.updateAccount.mutateAsync({ ...v, ...ref(editing.id, ev) })).name}` : `Created ${(await m.createAccount.mutateAsync(v)).name}`)}>
          <ServiceAccountFields />
        </DialogForm>
      )}
      {editing?.kind === "secret" && (
        <DialogForm title={editing.id ? `Grant of ${editing.values.secretName}` : "Grant a secret"} open onClose={close} schema={secretGrantSchema(s.pools)} defaults={editing.values} version={editing.version} canEdit={canEdit}
          save={async (v, ev) => done(editing.id ? `Saved grant of ${(await m.updateSecret.mutateAsync({ ...v, ...ref(editing.id, ev) })).secretName}` : `Granted ${(await m.createSecret.mutateAsync(v)).secretName}`)}>
          <SecretGrantFields stacks={s.stacks} pools={s.pools} />
        </DialogForm>
      )}
      {editing?.kind === "config" && (
        <DialogForm title={editing.id ? `Grant of ${editing.values.configMapName}` : "Grant a ConfigMap"} open onClose={close} schema={configGrantSchema(s.pools)} defaults={editing.values} version={editing.version} canEdit={canEdit}
          save={async (v, ev) => done(editing.id ? `Saved grant of ${(await m.updateConfig.mutateAsync({ ...v, ...ref(editing.id, ev) })).configMapName}` : `Granted ${(await m.createConfig.mutateAsync(v)).configMapName}`)}>
          <ConfigGrantFields stacks={s.stacks} pools={s.pools} />
        </DialogForm>
      )}
    </div>
  );
}
