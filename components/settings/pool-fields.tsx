"use client";

import { useFormContext, useWatch } from "react-hook-form";
import { CheckboxField, NumberField, SelectField, TextAreaField, TextField } from "@/components/forms/fields";
import { CheckboxGroupField } from "@/components/forms/list-fields";
import { taskKindLabel } from "@/components/ui/format";
import { POOL_KINDS } from "@/server/domain/pools/forms/schemas";
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
    </>
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
