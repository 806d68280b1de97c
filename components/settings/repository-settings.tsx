"use client";

import { zodResolver } from "@hookform/resolvers/zod";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import Link from "next/link";
import { useId, useState } from "react";
import { FormProvider, useForm } from "react-hook-form";
import { CheckboxField, NumberField, SelectField, TextField } from "@/components/forms/fields";
import { ConflictPanel, ReadOnlyNote, RefusalBanner } from "@/components/forms/form-status";
import { CheckboxGroupField } from "@/components/forms/list-fields";
import { useConfigForm } from "@/components/forms/use-config-form";
import { DetailPageSkeleton } from "@/components/layout/page-skeletons";
import { useTRPC } from "@/components/providers/trpc";
import { Alert } from "@/components/ui/alert";
import { Badge } from "@/components/ui/badge";
import { Button } from "@/components/ui/button";
import { cardVariants } from "@/components/ui/card";
import { cn } from "@/components/ui/cn";
import {
  ROLL_BACK_MODES,
  EXEMPTABLE_WRITE_BACK_KINDS,
  WRITE_BACK_LABELS,
  zRepositoryPolicyInput,
  type RepositoryPolicy,
  type RepositoryPolicyFormValues,
} from "@/server/domain/repositories/schemas";
import { ManualDispatchButton } from "@/components/runs/manual-dispatch-dialog";
import { LocalCiSection } from "./local-ci-section";
import { MembersSection } from "./members-section";
import { RepositoryAdminSection } from "./repository-admin-section";

// A repository's settings: its policy as a form (the schema its procedure validates with) and
// its members. Repository admins change them; everyone else with a role sees them read-only.

export function RepositorySettings({ repositoryId }: { repositoryId: string }) {
  const trpc = useTRPC();
  const settings = useQuery(trpc.repositorySettings.get.queryOptions({ repositoryId }));
  if (settings.isPending) return <DetailPageSkeleton label="Loading the repository settings" />;
  if (settings.error) return <Alert>{settings.error.message}</Alert>;
  const s = settings.data;
  return (
    <div className="space-y-6">
      <header className="space-y-1">
        <div className="text-sm text-zinc-500">
          <Link href="/settings" className="underline">Settings</Link> / <Link href="/settings/repositories" className="underline">Repositories</Link> / {s.fullName}
        </div>
        <div className="flex items-center gap-2">
          <h1 className="text-xl font-semibold">{s.fullName}</h1>
          <Badge tone="muted">{s.forge}</Badge>
          <Badge tone={s.trustTier === "trusted" ? "success" : "warning"}>{s.trustTier}</Badge>
          <Badge tone="neutral">you are {s.role}</Badge>
          <span className="ml-auto">
            {/* The dialog of /runs, preset with this repository (shown to maintainers; the procedure checks again). */}
            <ManualDispatchButton repositories={[{ id: s.id, fullName: s.fullName, role: s.role ?? "none" }]} repositoryId={s.id} />
          </span>
        </div>
      </header>
      <RepositoryAdminSection
        repositoryId={s.id}
        fullName={s.fullName}
        forge={s.forge}
        version={s.version}
        details={{ defaultBranch: s.defaultBranch, checkCommand: s.checkCommand, trustTier: s.trustTier, visibility: s.visibility }}
        role={s.role}
        isAirlockAdmin={s.isAirlockAdmin}
        disabled={s.disabled}
        removal={s.removal}
      />
      <LocalCiSection repositoryId={s.id} defaultBranch={s.defaultBranch} checkCommand={s.checkCommand} runCheck={s.runCheck} />
      <PolicyForm key={s.id} repositoryId={s.id} version={s.version} policy={s.policy} canEdit={s.canEdit} />
      <MembersSection repositoryId={s.id} members={s.members} canEdit={s.canEdit} />
    </div>
  );
}

type Right = { allowed: true; reason: null } | { allowed: false; reason: string };

function PolicyForm({ repositoryId, version, policy, canEdit }: { repositoryId: string; version: number; policy: RepositoryPolicy; canEdit: Right }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const noteId = useId();
  const [baseVersion, setBaseVersion] = useState(version);
  const form = useForm<RepositoryPolicyFormValues, unknown, RepositoryPolicy>({ resolver: zodResolver(zRepositoryPolicyInput), mode: "onTouched", defaultValues: policy });
  const status = useConfigForm(form, { canEdit: canEdit.allowed });
  const save = useMutation(trpc.repositorySettings.updatePolicy.mutationOptions({ onError: status.onError }));
  const onSubmit = form.handleSubmit(async (values) => {
    const saved = await save.mutateAsync({ ...values, repositoryId, expectedVersion: baseVersion }).catch(() => null);
    if (!saved) return;
    form.reset(values);
    setBaseVersion(saved.version);
    status.onSaved(`Saved the settings (v${saved.version})`);
    await queryClient.invalidateQueries({ queryKey: trpc.repositorySettings.get.queryKey({ repositoryId }) });
  });
  return (
    <section aria-label="Policy" className="space-y-3">
      <h2 className="text-sm font-semibold">
        Policy <Badge tone="muted">v{baseVersion}</Badge>
      </h2>
      {!canEdit.allowed && <ReadOnlyNote id={noteId} reason={canEdit.reason} />}
      {status.conflict && (
        <ConflictPanel
          conflict={status.conflict}
          onLoadTheirs={() => {
            if (!status.conflict) return;
            form.reset(status.conflict.current as RepositoryPolicyFormValues);
            setBaseVersion(status.conflict.currentVersion);
            status.clear();
          }}
          onKeepMine={() => {
            if (status.conflict) setBaseVersion(status.conflict.currentVersion);
            status.clear();
          }}
        />
      )}
      <RefusalBanner messages={status.refusal} />
      <FormProvider {...form}>
        <form onSubmit={onSubmit} noValidate aria-label="Repository policy" className="space-y-3">
          <fieldset disabled={!canEdit.allowed || save.isPending || !status.hydrated} aria-describedby={!canEdit.allowed ? noteId : undefined} className={cn(cardVariants(), "min-w-0 space-y-4")}>
            <div className="grid gap-3 sm:grid-cols-3">
              <CheckboxField name="autoRunOnFailedCheck" label="Auto-run on failed check" hint="A failed-check rule set to auto-run starts its run without a person." />
              <CheckboxField name="botCommentsAllowed" label="Bot comments allowed" hint="Diagnosis summaries of runs on the repository's own code may be posted without an approval; a fork's run always waits for a person." />
              <CheckboxField name="twoPersonRule" label="Two-person rule" hint="Whoever started a run cannot approve its write-backs." />
            </div>
            <CheckboxGroupField
              name="writeBackExceptions"
              label="Write-back exceptions"
              hint="Write-backs that may proceed without approval, on stacks whose approval mode allows exceptions, for runs on the repository's own code. A fork's run (or one Airlock cannot place) always waits for a person, except a label change. Each change is audited."
              options={EXEMPTABLE_WRITE_BACK_KINDS.map((k) => ({ value: k, label: WRITE_BACK_LABELS[k] }))}
            />
            <div className="grid gap-3 sm:grid-cols-3">
              <TextField name="botHandle" label="Bot handle" hint="Comments starting with it are commands." mono />
              <TextField name="dispatchLabel" label="Dispatch label" hint="Adding it to a pull request dispatches a run." mono />
              <NumberField name="maxFixAttempts" label="Max fix attempts" hint="Fix runs per pull request before a person is asked." />
            </div>
            <div className="grid gap-3 sm:grid-cols-3">
              <NumberField
                name="dailyCostCapUsd"
                label="Daily cost cap (USD)"
                step="0.01"
                nullable
                hint="What this repository's agent attempts may spend per UTC day (from 00:00 UTC). Each attempt reserves its stack's cost cap when it is claimed; one that would pass the daily cap is refused with the figures. Spend is what the agents reported (see the stack's cost cap). Empty: no daily cap."
              />
            </div>
            <SelectField
              name="rollBackMode"
              label="Roll back a failed deploy by"
              hint={`When triage decides a failed deploy rolls back, a person approves it first. ${ROLL_BACK_MODES.map((m) => `${m.label}: ${m.hint}`).join(" ")}`}
              options={ROLL_BACK_MODES.map((m) => ({ value: m.value, label: m.label }))}
            />
            <div className="grid gap-3 sm:grid-cols-3">
              <TextField name="agentReadyLabel" label="Ready-for-agent label" hint="A pull request agents may keep fixing carries it." mono />
              <TextField name="humanReadyLabel" label="Ready-for-human label" hint="Escalation swaps the agent label for this one." mono />
            </div>
          </fieldset>
          {canEdit.allowed && (
            <div className="flex items-center gap-3">
              <Button type="submit" variant="primary" disabled={save.isPending}>
                {save.isPending ? "Saving…" : "Save policy"}
              </Button>
              <Button type="button" disabled={!form.formState.isDirty || save.isPending} onClick={() => form.reset()}>
                Discard changes
              </Button>
            </div>
          )}
        </form>
      </FormProvider>
    </section>
  );
}
