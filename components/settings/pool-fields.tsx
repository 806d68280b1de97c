"use client";

import { CheckboxField, NumberField, SelectField, TextAreaField, TextField } from "@/components/forms/fields";
import { CheckboxGroupField } from "@/components/forms/list-fields";
import { taskKindLabel } from "@/components/ui/format";
import { POOL_KINDS } from "@/server/domain/pools/forms/schemas";
import { TASK_KINDS } from "@/server/domain/ingest/schemas";

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

function stackOptions(stacks: { id: string; name: string }[]) {
  return [{ value: "", label: "Every stack" }, ...stacks.map((s) => ({ value: s.id, label: s.name }))];
}

export function SecretGrantFields({ stacks }: { stacks: { id: string; name: string }[] }) {
  return (
    <>
      <div className="grid gap-3 sm:grid-cols-2">
        <TextField name="secretName" label="Secret name" hint="The name only: its value stays in the server environment." mono />
        <SelectField name="stackId" label="Stack" options={stackOptions(stacks)} />
      </div>
      <CheckboxField name="privileged" label="Privileged secret" hint="Write scopes or production access: trusted pools only, for named task kinds, never for forks." />
      <CheckboxField name="trustedPoolsOnly" label="Trusted pools only" hint="Unchecked: untrusted pools (fork PRs, unverified refs) may receive it too." />
      <CheckboxGroupField name="taskKinds" label="Task kinds that may receive it" hint="None checked: every task kind." options={taskKindOptions} />
    </>
  );
}

export function ConfigGrantFields({ stacks }: { stacks: { id: string; name: string }[] }) {
  return (
    <>
      <div className="grid gap-3 sm:grid-cols-2">
        <TextField name="configMapName" label="ConfigMap name" mono />
        <SelectField name="stackId" label="Stack" options={stackOptions(stacks)} />
      </div>
      <CheckboxField name="trustedPoolsOnly" label="Trusted pools only" />
      <CheckboxGroupField name="taskKinds" label="Task kinds that may receive it" hint="None checked: every task kind." options={taskKindOptions} />
    </>
  );
}
