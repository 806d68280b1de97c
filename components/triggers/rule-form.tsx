"use client";

import { zodResolver } from "@hookform/resolvers/zod";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import Link from "next/link";
import { useRouter } from "next/navigation";
import { useId, useState } from "react";
import { FormProvider, useForm, useWatch } from "react-hook-form";
import { toast } from "sonner";
import { CheckboxField, NumberField, SelectField, TextField } from "@/components/forms/fields";
import { ConflictPanel, ReadOnlyNote, RefusalBanner } from "@/components/forms/form-status";
import { StringListField } from "@/components/forms/list-fields";
import { useConfigForm } from "@/components/forms/use-config-form";
import { DetailPageSkeleton } from "@/components/layout/page-skeletons";
import { useTRPC } from "@/components/providers/trpc";
import { Alert } from "@/components/ui/alert";
import { Badge } from "@/components/ui/badge";
import { Button } from "@/components/ui/button";
import { cardVariants } from "@/components/ui/card";
import { cn } from "@/components/ui/cn";
import { taskKindLabel } from "@/components/ui/format";
import { TRIGGER_KINDS } from "@/server/domain/ci-events/schemas";
import {
  ALLOWED_TASK_KINDS,
  APPLICABLE_KEYS,
  FLAKY_SCAN_DEFAULTS,
  MATCH_KEY_FIELDS,
  TRIGGER_DEFAULTS,
  emptyTriggerRule,
  zTriggerRuleInput,
  type MatchKey,
  type TriggerRuleFormValues,
  type TriggerRuleInput,
} from "@/server/domain/triggers/forms/schemas";
import { DryRunPanel } from "./dry-run-panel";
import { FlakyScansPanel } from "./flaky-scans-panel";

// A trigger rule as a form (the same zTriggerRuleInput the procedures validate with). Only the
// match keys the kind can carry are shown; changing the kind clears the others. The dry run
// below tries the form's rule, saved or not.

export const KIND_LABELS: Record<(typeof TRIGGER_KINDS)[number], string> = {
  failed_check: "Failed check",
  pr_comment: "PR comment",
  label: "Label",
  check_rerun: "Check rerun",
  release: "Release",
  flaky_scan: "Flaky scan",
  manual: "Manual",
};

type Right = { allowed: true; reason: null } | { allowed: false; reason: string };
type Rule = TriggerRuleInput & { id: string; version: number };

const toForm = (r: TriggerRuleInput): TriggerRuleFormValues => ({
  name: r.name,
  kind: r.kind,
  stackId: r.stackId,
  taskKind: r.taskKind,
  action: r.action,
  alsoFire: r.alsoFire,
  enabled: r.enabled,
  pathFilters: r.pathFilters,
  repositoryId: r.repositoryId ?? "",
  workflow: r.workflow ?? "",
  job: r.job ?? "",
  step: r.step ?? "",
  branchGlob: r.branchGlob ?? "",
  failureSignature: r.failureSignature ?? "",
  releaseVersion: r.releaseVersion ?? "",
  releaseChart: r.releaseChart ?? "",
  releaseNpmPackage: r.releaseNpmPackage ?? "",
  releaseImage: r.releaseImage ?? "",
  releaseChecksum: r.releaseChecksum ?? "",
  releaseBranch: r.releaseBranch ?? "",
  scanSchedule: r.scanSchedule ?? "",
  scanWindowHours: r.scanWindowHours,
  scanThreshold: r.scanThreshold,
});

export function RuleEditor({ ruleId }: { ruleId: string | null }) {
  const trpc = useTRPC();
  const options = useQuery(trpc.triggers.formOptions.queryOptions());
  const detail = useQuery({ ...trpc.triggers.byId.queryOptions({ ruleId: ruleId ?? "" }), enabled: ruleId !== null });
  if (options.isPending || (ruleId !== null && detail.isPending)) return <DetailPageSkeleton label="Loading the trigger rule" />;
  const error = options.error ?? detail.error;
  if (error || !options.data) return <Alert>{error?.message}</Alert>;
  if (ruleId !== null && detail.data) {
    const { rule, canEdit } = detail.data;
    return <RuleForm key={rule.id} rule={rule} canEdit={canEdit} options={options.data} stackLabel={rule.stack.archivedAt ? `${rule.stack.name} (archived)` : rule.stack.name} />;
  }
  const canCreate: Right =
    options.data.canManageGlobal || options.data.repositories.some((r) => r.canManage)
      ? { allowed: true, reason: null }
      : { allowed: false, reason: "Creating a trigger rule needs the maintainer role on a repository." };
  return <RuleForm rule={null} canEdit={canCreate} options={options.data} stackLabel={null} />;
}

type Options = {
  repositories: { id: string; fullName: string; autoRunOnFailedCheck: boolean; role: string | null; canManage: boolean }[];
  stacks: { id: string; name: string; version: number }[];
  canManageGlobal: boolean;
};

function RuleForm({ rule, canEdit, options, stackLabel }: { rule: Rule | null; canEdit: Right; options: Options; stackLabel: string | null }) {
  const trpc = useTRPC();
  const router = useRouter();
  const queryClient = useQueryClient();
  const noteId = useId();
  const [baseVersion, setBaseVersion] = useState(rule?.version ?? 0);
  const firstRepo = options.repositories.find((r) => r.canManage)?.id ?? "";
  const form = useForm<TriggerRuleFormValues, unknown, TriggerRuleInput>({
    resolver: zodResolver(zTriggerRuleInput),
    mode: "onTouched",
    defaultValues: rule ? toForm(rule) : { ...emptyTriggerRule(), repositoryId: firstRepo },
  });
  const status = useConfigForm(form, { canEdit: canEdit.allowed });
  const kind = useWatch({ control: form.control, name: "kind" });
  const repositoryId = useWatch({ control: form.control, name: "repositoryId" });
  const action = useWatch({ control: form.control, name: "action" });
  const applicable = APPLICABLE_KEYS[kind];
  const show = (key: MatchKey) => applicable.includes(key);

  const onKind = (next: string) => {
    const k = next as TriggerRuleFormValues["kind"];
    for (const key of Object.keys(MATCH_KEY_FIELDS) as MatchKey[]) {
      if (key === "repository" || APPLICABLE_KEYS[k].includes(key)) continue;
      const field = MATCH_KEY_FIELDS[key];
      form.setValue(field, field === "pathFilters" ? [] : "", { shouldDirty: true });
    }
    if (!ALLOWED_TASK_KINDS[k].includes(form.getValues("taskKind"))) form.setValue("taskKind", TRIGGER_DEFAULTS[k].taskKind, { shouldDirty: true });
    if (!rule) form.setValue("action", TRIGGER_DEFAULTS[k].action, { shouldDirty: true });
    // Only flaky-scan rules scan: they get the defaults, every other kind clears the fields.
    const scan = k === "flaky_scan" ? FLAKY_SCAN_DEFAULTS : { scanSchedule: "", scanWindowHours: null, scanThreshold: null };
    for (const [field, value] of Object.entries(scan) as [keyof typeof scan, string | number | null][]) {
      if (k !== "flaky_scan" || form.getValues(field) === null || form.getValues(field) === "") form.setValue(field, value, { shouldDirty: true });
    }
  };

  const invalidate = () => queryClient.invalidateQueries({ queryKey: trpc.triggers.list.queryKey() });
  const create = useMutation(trpc.triggers.create.mutationOptions({ onError: status.onError }));
  const update = useMutation(trpc.triggers.update.mutationOptions({ onError: status.onError }));
  const remove = useMutation(
    trpc.triggers.delete.mutationOptions({
      onError: status.onError,
      onSuccess: async () => {
        form.reset();
        toast.success("Rule deleted");
        await invalidate();
        router.push("/triggers");
      },
    }),
  );
  const saving = create.isPending || update.isPending || remove.isPending;

  const onSubmit = form.handleSubmit(async (values) => {
    const saved = rule
      ? await update.mutateAsync({ ...values, ruleId: rule.id, expectedVersion: baseVersion }).catch(() => null)
      : await create.mutateAsync(values).catch(() => null);
    if (!saved) return;
    form.reset(toForm(saved));
    setBaseVersion(saved.version);
    status.onSaved(rule ? `Saved ${saved.name} (v${saved.version})` : `Created rule ${saved.name}`);
    await invalidate();
    if (!rule) router.push(`/triggers/${saved.id}`);
  });

  const loadTheirs = async () => {
    if (!rule || !status.conflict) return;
    form.reset(toForm(status.conflict.current as TriggerRuleInput));
    setBaseVersion(status.conflict.currentVersion);
    status.clear();
    await queryClient.invalidateQueries({ queryKey: trpc.triggers.byId.queryKey({ ruleId: rule.id }) });
  };
  const keepMine = () => {
    if (!status.conflict) return;
    setBaseVersion(status.conflict.currentVersion);
    status.clear();
  };

  const repo = options.repositories.find((r) => r.id === repositoryId);
  const stackOptions = [
    { value: "", label: "Pick a stack" },
    ...(rule && stackLabel && !options.stacks.some((s) => s.id === rule.stackId) ? [{ value: rule.stackId, label: stackLabel }] : []),
    ...options.stacks.map((s) => ({ value: s.id, label: `${s.name} (v${s.version})` })),
  ];

  return (
    <div className="space-y-6">
      <header className="space-y-1">
        <div className="text-sm text-zinc-500">
          <Link href="/triggers" className="hover:underline">Trigger rules</Link> / {rule ? rule.name : "new"}
        </div>
        <div className="flex items-center gap-2">
          <h1 className="text-xl font-semibold">{rule ? rule.name : "New trigger rule"}</h1>
          {rule && <Badge tone="neutral">v{baseVersion}</Badge>}
        </div>
      </header>
      {!canEdit.allowed && <ReadOnlyNote id={noteId} reason={canEdit.reason} />}
      {status.conflict && <ConflictPanel conflict={status.conflict} onLoadTheirs={() => void loadTheirs()} onKeepMine={keepMine} />}
      <RefusalBanner messages={status.refusal} />
      <FormProvider {...form}>
        <form onSubmit={onSubmit} aria-label="Trigger rule" noValidate className="space-y-4">
          <fieldset disabled={!canEdit.allowed || saving || !status.hydrated} aria-describedby={!canEdit.allowed ? noteId : undefined} className={cn(cardVariants(), "min-w-0 space-y-4")}>
            <div className="grid gap-3 sm:grid-cols-2">
              <TextField name="name" label="Name" />
              <SelectField name="kind" label="Kind" onValueChange={onKind} options={TRIGGER_KINDS.map((k) => ({ value: k, label: KIND_LABELS[k] }))} />
              <SelectField
                name="repositoryId"
                label="Repository"
                hint={options.canManageGlobal ? undefined : "A rule for every repository is an Airlock admin's to make."}
                options={[
                  { value: "", label: "Every repository", disabled: !options.canManageGlobal },
                  ...options.repositories.map((r) => ({ value: r.id, label: r.canManage ? r.fullName : `${r.fullName} (you are ${r.role ?? "not a member"})`, disabled: !r.canManage })),
                ]}
              />
              <SelectField name="stackId" label="Stack" options={stackOptions} />
            </div>
            <fieldset className="space-y-3">
              <legend className="text-sm font-semibold">Match keys <span className="font-normal text-zinc-500">(empty: any)</span></legend>
              <div className="grid gap-3 sm:grid-cols-2">
                {show("workflow") && <TextField name="workflow" label="Workflow" placeholder="CI" />}
                {show("job") && <TextField name="job" label="Job" hint="Matrix legs match too: test matches test (ubuntu, 20)" placeholder="test" />}
                {show("step") && <TextField name="step" label="Step" placeholder="Run npm test" />}
                {show("branch") && <TextField name="branchGlob" label={kind === "release" ? "Tag glob" : "Branch glob"} placeholder={kind === "release" ? "v2.*" : "main, release/*"} mono />}
                {show("failureSignature") && <TextField name="failureSignature" label="Failure signature" hint="16 hex characters, from a failed job" mono />}
              </div>
              {kind === "release" && (
                <div className="space-y-2" data-testid="release-keys">
                  <div className="grid gap-3 sm:grid-cols-2">
                    <TextField name="releaseVersion" label="Version glob" hint="The tag without its leading v: 2.* matches v2.1.0." placeholder="2.*" mono />
                    <TextField name="releaseBranch" label="Release branch glob" hint="A branch the tag's commit is on. Local forge: every branch containing it; GitHub: only the branch the event names (a release's target, a tag push's base branch)." placeholder="main, release/*" mono />
                    <TextField name="releaseChart" label="Chart" hint="The release ships <chart>-<version>.tgz; its version, and the repository's Chart.yaml (local forge), must be the release's." placeholder="airlock" mono />
                    <TextField name="releaseNpmPackage" label="npm package" hint="The release ships npm pack's tarball of it; its version, and package.json (local forge), must be the release's." placeholder="@acme/web" mono />
                    <TextField name="releaseImage" label="Image" hint="The release ships <image>:<tag>. Local forge only: GitHub release events carry no images, so on GitHub this key never matches." placeholder="ghcr.io/acme/web" mono />
                    <TextField name="releaseChecksum" label="Checksum file" hint="The release ships it; every artifact must be listed with its digest. GitHub: the file's entries are not read, so each release shows an unverified-checksum gap." placeholder="SHA256SUMS" mono />
                  </div>
                  <p className="text-xs text-zinc-500">
                    A key that misses skips the rule, and the trigger proof says which. In a release the rule matched, each gap found (a missing artifact, a checksum mismatch, a version out of line) is its own approval item: the release is published only after a person accepts every one.
                  </p>
                </div>
              )}
              {show("paths") && <StringListField name="pathFilters" label="Path filters" hint="Globs on the changed files; start with ! to exclude." itemLabel="Path filter" addLabel="Add path filter" placeholder="src/**" mono />}
            </fieldset>
            {kind === "flaky_scan" && (
              <fieldset className="space-y-3">
                <legend className="text-sm font-semibold">Scan</legend>
                <p className="text-xs text-zinc-500">
                  A scan groups the window&apos;s failed jobs by failure signature. A signature with at least the threshold of failures, in two or more CI runs, whose job also passed in the window, is a flaky cluster: it is sent as one flaky-scan trigger, and the same failures found again are dropped as a duplicate.
                </p>
                <div className="grid gap-3 sm:grid-cols-3">
                  <TextField name="scanSchedule" label="Schedule (UTC)" hint="Crontab: minute hour day month weekday. Empty: only Scan now." placeholder="0 2 * * *" mono />
                  <NumberField name="scanWindowHours" label="Window (hours)" hint="How far back a scan reads (at most 720)." />
                  <NumberField name="scanThreshold" label="Threshold (failures)" hint="Failures of one signature that make a cluster." />
                </div>
              </fieldset>
            )}
            <div className="grid gap-3 sm:grid-cols-3">
              <SelectField name="taskKind" label="Task kind" options={ALLOWED_TASK_KINDS[kind].map((k) => ({ value: k, label: taskKindLabel[k] ?? k }))} />
              <SelectField
                name="action"
                label="Action"
                hint={kind === "failed_check" && action === "auto_run" && repo && !repo.autoRunOnFailedCheck ? `${repo.fullName} does not allow auto-run on failed checks: these runs stay suggestions.` : undefined}
                options={[
                  { value: "suggest", label: "Suggest (a person starts it)" },
                  { value: "auto_run", label: "Auto-run" },
                ]}
              />
              <CheckboxField name="enabled" label="Enabled" className="self-end pb-2" />
            </div>
            <CheckboxField
              name="alsoFire"
              label="Also fire when a more specific rule matches the same failure"
              hint="Otherwise one failure makes one run: a repository's rule wins over a rule for every repository, then the rule with more match keys, then the older rule."
            />
          </fieldset>
          {canEdit.allowed && (
            <div className="flex flex-wrap items-center gap-3">
              <Button type="submit" variant="primary" disabled={saving}>
                {saving ? "Saving…" : rule ? `Save as v${baseVersion + 1}` : "Create rule"}
              </Button>
              <Button type="button" disabled={!form.formState.isDirty || saving} onClick={() => form.reset()}>
                Discard changes
              </Button>
              {rule && (
                <Button
                  type="button"
                  variant="danger"
                  className="ml-auto"
                  disabled={saving}
                  onClick={() => {
                    if (window.confirm(`Delete ${rule.name}? Runs it made keep their history.`)) remove.mutate({ ruleId: rule.id, expectedVersion: baseVersion });
                  }}
                >
                  Delete rule
                </Button>
              )}
            </div>
          )}
        </form>
        {rule && rule.kind === "flaky_scan" && <FlakyScansPanel ruleId={rule.id} canScan={canEdit.allowed} />}
        <DryRunPanel ruleId={rule?.id ?? null} />
      </FormProvider>
    </div>
  );
}
