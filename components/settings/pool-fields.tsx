"use client";

import { useFormContext, useWatch } from "react-hook-form";
import { CheckboxField, NumberField, SelectField, TextAreaField, TextField } from "@/components/forms/fields";
import { CheckboxGroupField, StringListField } from "@/components/forms/list-fields";
import { Badge } from "@/components/ui/badge";
import { taskKindLabel } from "@/components/ui/format";
import { formatMb } from "@/server/execution/sandbox/schemas";
import { NETWORK_MODES, POOL_KINDS } from "@/server/domain/pools/forms/schemas";
import { TASK_KINDS } from "@/server/domain/ci-events/schemas";

// The fields of the pool, service account and grant dialogs; paths follow their zod schemas.

const taskKindOptions = TASK_KINDS.map((k) => ({ value: k, label: taskKindLabel[k] ?? k }));

export function PoolFields({ accounts }: { accounts: { id: string; name: string; namespace: string; privileged: boolean }[] }) {
  const accountOptions = [
    { value: "", label: "Pick a service account" },
    ...accounts.map((a) => ({ value: a.id, label: `${a.namespace}/${a.name}${a.privileged ? " (privileged)" : ""}` })),
  ];
  return (
    <>
      <div className="grid gap-3 sm:grid-cols-2">
        <TextField name="name" label="Name" mono />
        <NumberField name="concurrency" label="Concurrency" hint="Attempts at once" />
        <SelectField
          name="trustTier"
          label="Trust tier"
          hint="Fork pull requests and untrusted refs always run on untrusted pools."
          options={[
            { value: "trusted", label: "trusted" },
            { value: "untrusted", label: "untrusted" },
          ]}
        />
        <SelectField name="kind" label="Kind" options={POOL_KINDS.map((k) => ({ value: k, label: k === "kubernetes" ? "kubernetes (a Job per attempt)" : "local (a process)" }))} />
        <SelectField name="runtimeServiceAccountId" label="Runtime service account" hint="The agent session's identity" options={accountOptions} />
        <SelectField name="runnerServiceAccountId" label="Runner service account" hint="What launches the attempt" options={accountOptions} />
      </div>
      <CheckboxGroupField name="allowedTaskKinds" label="Allowed task kinds" hint="None checked: every task kind." options={taskKindOptions} />
      <PoolSandboxFields />
    </>
  );
}

const networkLabels: Record<string, string> = {
  none: "none: its own loopback only",
  restricted: "restricted: only the allowed hosts, through the egress proxy",
  open: "open: any host but this machine (trusted pools only)",
};

/** What every attempt on the pool runs inside: network, limits, and the unsandboxed fallback. */
function PoolSandboxFields() {
  const { control } = useFormContext();
  const mode = useWatch({ control, name: "networkMode" }) as string;
  const tier = useWatch({ control, name: "trustTier" }) as string;
  const unsandboxed = useWatch({ control, name: "allowUnsandboxed" }) as boolean;
  return (
    <fieldset className="space-y-3 rounded border border-zinc-200 p-3 dark:border-zinc-800">
      <legend className="px-1 text-xs font-semibold">Sandbox</legend>
      <SelectField
        name="networkMode"
        label="Network"
        hint="The host's loopback (database, web server, worker) is never reachable, whatever the mode."
        options={NETWORK_MODES.map((m) => ({ value: m, label: networkLabels[m] ?? m }))}
      />
      {mode === "restricted" && (
        <StringListField
          name="allowedHosts"
          label="Allowed hosts"
          hint="Besides the stack's model API (and the forge's git host on trusted pools). host, *.domain or ip, with an optional :port."
          itemLabel="Allowed host"
          addLabel="Add host"
          placeholder="registry.npmjs.org"
          mono
        />
      )}
      <div className="grid gap-3 sm:grid-cols-2">
        <NumberField name="memoryLimitMb" label="Memory (MiB)" hint="All its processes together" />
        <NumberField name="processLimit" label="Processes" hint="Processes and threads at once" />
        <NumberField name="cpuLimitSeconds" label="CPU time (s)" hint="All its processes together" />
        <NumberField name="diskLimitMb" label="Workspace disk (MiB)" hint="Workspace, artifacts, HOME, /tmp" />
      </div>
      {tier === "trusted" && (
        <CheckboxField
          name="allowUnsandboxed"
          label="Run without a sandbox where none works"
          hint="Only for a trusted pool, on a machine without bubblewrap: its agents then see the worker's files and network. Shown as a warning on every such run."
        />
      )}
      {tier === "trusted" && unsandboxed && (
        <p role="alert" className="rounded bg-red-50 px-2 py-1 text-xs text-red-800 dark:bg-red-950 dark:text-red-200">
          Attempts on this pool may run unsandboxed: nothing then stops an agent from reading the worker&apos;s secrets.
        </p>
      )}
    </fieldset>
  );
}

export function ServiceAccountFields() {
  return (
    <>
      <div className="grid gap-3 sm:grid-cols-2">
        <TextField name="name" label="Name" mono />
        <TextField name="namespace" label="Namespace" mono />
      </div>
      <CheckboxField name="privileged" label="Privileged" hint="May hold privileged secrets and write scopes; never used by an untrusted pool." />
      <TextAreaField name="description" label="Description" rows={2} />
    </>
  );
}

type PoolOption = { id: string; name: string; trustTier: "trusted" | "untrusted" };

/** Trust tier or named pools; the pool list shows only for a named scope. */
function PoolScopeFields({ pools, tierHint }: { pools: PoolOption[]; tierHint: string }) {
  const { control } = useFormContext();
  const scope = useWatch({ control, name: "poolScope" }) as string;
  return (
    <>
      <SelectField
        name="poolScope"
        label="Pools that may receive it"
        options={[
          { value: "trust_tier", label: "Every pool its trust tier allows" },
          { value: "named_pools", label: "Only the runner pools named below" },
        ]}
      />
      <CheckboxField name="trustedPoolsOnly" label="Trusted pools only" hint={tierHint} />
      {scope === "named_pools" && (
        <CheckboxGroupField
          name="poolIds"
          label="Named runner pools"
          hint="Only these pools receive it; untrusted ones never get a privileged secret."
          options={pools.map((p) => ({ value: p.id, label: `${p.name} (${p.trustTier})` }))}
        />
      )}
    </>
  );
}

function stackOptions(stacks: { id: string; name: string }[]) {
  return [{ value: "", label: "Every stack" }, ...stacks.map((s) => ({ value: s.id, label: s.name }))];
}

export function SecretGrantFields({ stacks, pools }: { stacks: { id: string; name: string }[]; pools: PoolOption[] }) {
  return (
    <>
      <div className="grid gap-3 sm:grid-cols-2">
        <TextField name="secretName" label="Secret name" hint="The name only: its value stays in the server environment." mono />
        <SelectField name="stackId" label="Stack" options={stackOptions(stacks)} />
      </div>
      <CheckboxField name="privileged" label="Privileged secret" hint="Write scopes or production access: trusted pools only, for named task kinds, never for forks." />
      <PoolScopeFields pools={pools} tierHint="Unchecked: untrusted pools (fork PRs, unverified refs) may receive it too." />
      <CheckboxGroupField name="taskKinds" label="Task kinds that may receive it" hint="None checked: every task kind." options={taskKindOptions} />
    </>
  );
}

export function ConfigGrantFields({ stacks, pools }: { stacks: { id: string; name: string }[]; pools: PoolOption[] }) {
  return (
    <>
      <div className="grid gap-3 sm:grid-cols-2">
        <TextField name="configMapName" label="ConfigMap name" mono />
        <SelectField name="stackId" label="Stack" options={stackOptions(stacks)} />
      </div>
      <PoolScopeFields pools={pools} tierHint="Unchecked: untrusted pools may receive it too." />
      <CheckboxGroupField name="taskKinds" label="Task kinds that may receive it" hint="None checked: every task kind." options={taskKindOptions} />
    </>
  );
}

/** The pools table's sandbox cell: network, limits, and a warning when it may run unsandboxed. */
export function PoolSandboxSummary({ pool }: { pool: { kind: string; trustTier: string; networkMode: string; allowedHosts: string[]; memoryLimitMb: number; processLimit: number; allowUnsandboxed: boolean } }) {
  return (
    <span className="flex flex-col gap-0.5">
      <span>
        network <code>{pool.networkMode}</code>
        {pool.networkMode === "restricted" && pool.allowedHosts.length > 0 && ` (${pool.allowedHosts.join(", ")})`}
      </span>
      <span className="text-zinc-600 dark:text-zinc-400">
        {formatMb(pool.memoryLimitMb)}, {pool.processLimit} processes
      </span>
      {pool.allowUnsandboxed && pool.trustTier === "trusted" && pool.kind === "local" && (
        <Badge tone="danger">may run unsandboxed</Badge>
      )}
    </span>
  );
}
