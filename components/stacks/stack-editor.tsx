"use client";

import { zodResolver } from "@hookform/resolvers/zod";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import Link from "next/link";
import { useRouter } from "next/navigation";
import { useId, useState } from "react";
import { FormProvider, useForm } from "react-hook-form";
import { toast } from "sonner";
import { ConflictPanel, ReadOnlyNote, RefusalBanner } from "@/components/forms/form-status";
import { useConfigForm } from "@/components/forms/use-config-form";
import { DetailPageSkeleton } from "@/components/layout/page-skeletons";
import { useTRPC } from "@/components/providers/trpc";
import { Alert } from "@/components/ui/alert";
import { Badge } from "@/components/ui/badge";
import { Button, buttonVariants } from "@/components/ui/button";
import { emptyStackSpec, zStackInput, type StackFormValues, type StackInput } from "@/server/domain/stacks/schemas";
import { PromptSection } from "./prompt-section";
import { AdapterSection, CapabilitiesSection, IdentitySection, LimitsSection, McpServersSection, SubagentsSection } from "./stack-sections";
import { StackPreview } from "./stack-preview";
import { StackVersions } from "./stack-versions";

// The stack page: the form (the same zStackInput the procedures validate with), the live
// preview beside it, and the versions below. Create, clone (a create that starts from another
// stack) and edit share it; a viewer sees it read-only with the reason.

type Right = { allowed: true; reason: null } | { allowed: false; reason: string };

export function StackEditor(props: { stackId: string } | { stackId: null; cloneId: string | null }) {
  const trpc = useTRPC();
  const detail = useQuery({ ...trpc.stacks.byId.queryOptions({ stackId: props.stackId ?? "" }), enabled: props.stackId !== null });
  const clone = useQuery({ ...trpc.stacks.byId.queryOptions({ stackId: "cloneId" in props ? (props.cloneId ?? "") : "" }), enabled: "cloneId" in props && props.cloneId !== null });
  const list = useQuery({ ...trpc.stacks.list.queryOptions(), enabled: props.stackId === null });

  if (props.stackId !== null) {
    if (detail.isPending) return <DetailPageSkeleton label="Loading the stack" panels={3} />;
    if (detail.error) return <Alert>{detail.error.message}</Alert>;
    const d = detail.data;
    return <StackForm key={d.id} stackId={d.id} version={d.version} digest={d.digest} archived={d.archivedAt !== null} canEdit={d.canEdit} canCreate={d.canCreate} defaults={{ name: d.name, description: d.description, spec: d.spec }} versions={d.versions} rules={d.rules} />;
  }
  const cloneId = "cloneId" in props ? props.cloneId : null;
  if (list.isPending || (cloneId !== null && clone.isPending)) return <DetailPageSkeleton label="Loading the stack form" panels={3} />;
  if (list.error || clone.error) return <Alert>{(list.error ?? clone.error)?.message}</Alert>;
  const source = cloneId !== null ? clone.data : undefined;
  const defaults: StackFormValues = source
    ? { name: `${source.name}-copy`, description: source.description, spec: source.spec }
    : { name: "", description: "", spec: emptyStackSpec() };
  return <StackForm stackId={null} version={0} digest={null} archived={false} canEdit={list.data.canCreate} canCreate={list.data.canCreate} defaults={defaults} clonedFrom={source ? { id: source.id, name: source.name } : null} versions={[]} rules={[]} />;
}

type FormProps = {
  stackId: string | null;
  version: number;
  digest: string | null;
  archived: boolean;
  canEdit: Right;
  canCreate: Right;
  defaults: StackFormValues;
  clonedFrom?: { id: string; name: string } | null;
  versions: { version: number; digest: string; createdAt: Date; createdBy: string | null }[];
  rules: { id: string; name: string; kind: string; enabled: boolean; repository: string | null }[];
};

function StackForm(props: FormProps) {
  const trpc = useTRPC();
  const router = useRouter();
  const queryClient = useQueryClient();
  const noteId = useId();
  const { stackId, canEdit } = props;
  const [baseVersion, setBaseVersion] = useState(props.version);
  const form = useForm<StackFormValues, unknown, StackInput>({ resolver: zodResolver(zStackInput), mode: "onTouched", defaultValues: props.defaults });
  const status = useConfigForm(form, { canEdit: canEdit.allowed });
  const invalidate = () =>
    Promise.all([
      queryClient.invalidateQueries({ queryKey: trpc.stacks.list.queryKey() }),
      stackId ? queryClient.invalidateQueries({ queryKey: trpc.stacks.byId.queryKey({ stackId }) }) : null,
    ]);

  const create = useMutation(trpc.stacks.create.mutationOptions({ onError: status.onError }));
  const update = useMutation(trpc.stacks.update.mutationOptions({ onError: status.onError }));
  const saving = create.isPending || update.isPending;

  const onSubmit = form.handleSubmit(async (values) => {
    if (stackId === null) {
      const saved = await create.mutateAsync({ ...values, ...(props.clonedFrom ? { clonedFromId: props.clonedFrom.id } : {}) }).catch(() => null);
      if (!saved) return;
      form.reset(values);
      status.onSaved(`Created ${saved.name} (v1)`);
      await invalidate();
      router.push(`/stacks/${saved.id}`);
      return;
    }
    const saved = await update.mutateAsync({ ...values, stackId, expectedVersion: baseVersion }).catch(() => null);
    if (!saved) return;
    form.reset(values);
    setBaseVersion(saved.version);
    status.onSaved(`Saved ${saved.name} as v${saved.version}`);
    await invalidate();
  });

  const loadTheirs = async () => {
    if (!stackId) return;
    const fresh = await queryClient.fetchQuery({ ...trpc.stacks.byId.queryOptions({ stackId }), staleTime: 0 });
    form.reset({ name: fresh.name, description: fresh.description, spec: fresh.spec });
    setBaseVersion(fresh.version);
    status.clear();
    toast.info(`Loaded v${fresh.version}`);
  };
  const keepMine = () => {
    if (!status.conflict) return;
    setBaseVersion(status.conflict.currentVersion);
    status.clear();
    toast.info(`Your edits are kept: saving now makes v${status.conflict.currentVersion + 1} on top of v${status.conflict.currentVersion}.`);
  };

  const title = stackId === null ? (props.clonedFrom ? `Clone ${props.clonedFrom.name}` : "New stack") : props.defaults.name;
  return (
    <div className="space-y-6">
      <header className="flex flex-wrap items-end justify-between gap-3">
        <div className="space-y-1">
          <div className="text-sm text-zinc-500">
            <Link href="/stacks" className="hover:underline">Stacks</Link> / {stackId === null ? "new" : props.defaults.name}
          </div>
          <div className="flex flex-wrap items-center gap-2">
            <h1 className="text-xl font-semibold">{title}</h1>
            {stackId !== null && <Badge tone="neutral" data-testid="stack-version">v{baseVersion}</Badge>}
            {props.archived && <Badge tone="warning">archived</Badge>}
            {props.digest && <span className="font-mono text-xs text-zinc-500" title={props.digest}>{props.digest.slice(0, 19)}…</span>}
          </div>
          {props.rules.length > 0 && (
            <p className="text-xs text-zinc-500">
              Used by {props.rules.map((r) => `${r.name}${r.repository ? ` (${r.repository})` : " (every repository)"}${r.enabled ? "" : " [disabled]"}`).join(", ")}
            </p>
          )}
        </div>
        {stackId !== null && props.canCreate.allowed && (
          <Link href={`/stacks/new?clone=${stackId}`} className={buttonVariants({ size: "sm" })}>Clone</Link>
        )}
      </header>
      {!canEdit.allowed && <ReadOnlyNote id={noteId} reason={canEdit.reason} />}
      {status.conflict && <ConflictPanel conflict={status.conflict} onLoadTheirs={() => void loadTheirs()} onKeepMine={keepMine} />}
      <RefusalBanner messages={status.refusal} />
      <FormProvider {...form}>
        <div className="grid grid-cols-1 gap-6 xl:grid-cols-[minmax(0,3fr)_minmax(0,2fr)]">
          <form onSubmit={onSubmit} aria-label="Stack" noValidate className="space-y-4">
            <fieldset disabled={!canEdit.allowed || saving || !status.hydrated} aria-describedby={!canEdit.allowed ? noteId : undefined} className="min-w-0 space-y-4">
              <IdentitySection />
              <AdapterSection />
              <CapabilitiesSection />
              <McpServersSection />
              <SubagentsSection />
              <PromptSection disabled={!canEdit.allowed} />
              <LimitsSection />
            </fieldset>
            {canEdit.allowed && (
              <div className="sticky bottom-0 flex items-center gap-3 border-t border-zinc-200 bg-zinc-50/95 py-3 dark:border-zinc-800 dark:bg-zinc-950/95">
                <Button type="submit" variant="primary" disabled={saving}>
                  {saving ? "Saving…" : stackId === null ? "Create stack" : `Save as v${baseVersion + 1}`}
                </Button>
                <Button type="button" disabled={!form.formState.isDirty || saving} onClick={() => form.reset()}>
                  Discard changes
                </Button>
                {form.formState.isDirty && <span className="text-xs text-amber-700 dark:text-amber-400">Unsaved changes</span>}
              </div>
            )}
          </form>
          <aside className="space-y-6 xl:sticky xl:top-14 xl:max-h-[calc(100vh-4rem)] xl:self-start xl:overflow-y-auto">
            <StackPreview stackId={stackId} />
          </aside>
        </div>
      </FormProvider>
      {stackId !== null && <StackVersions stackId={stackId} versions={props.versions} />}
    </div>
  );
}
