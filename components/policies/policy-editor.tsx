"use client";

import { zodResolver } from "@hookform/resolvers/zod";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import Link from "next/link";
import { useState } from "react";
import { FormProvider, useForm } from "react-hook-form";
import { toast } from "sonner";
import type { PolicyKind } from "@/server/db/generated/enums";
import { zPolicyDefinition, type PolicyDefinition, type PolicyDefinitionInput } from "@/server/domain/policy/schemas";
import { useTRPC } from "@/components/providers/trpc";
import { ReadOnlyNote } from "@/components/forms/form-status";
import { DetailPageSkeleton } from "@/components/layout/page-skeletons";
import { Alert } from "@/components/ui/alert";
import { Badge } from "@/components/ui/badge";
import { Button } from "@/components/ui/button";
import { CheckPanel, type CheckState } from "./check-panel";
import { LiveCheck } from "./live-check";
import { PolicyModel } from "./policy-model";
import { RulesEditor } from "./rules-editor";
import { TryItPanel } from "./try-it-panel";
import type { PolicyDetail } from "./types";
import { useUnsavedChangesGuard } from "@/components/forms/use-unsaved-changes-guard";
import { VersionHistory } from "./version-history";

// The policy page: the rules as a form (same zod schema as `policies.save`), the live checks
// and Try it beside them, the model and the version history below. Only admins save; everyone
// else sees the same page read-only and can still try facts against it.

export function PolicyEditor({ kind }: { kind: PolicyKind }) {
  const trpc = useTRPC();
  const detail = useQuery(trpc.policies.byKind.queryOptions({ kind }));
  if (detail.isPending) return <DetailPageSkeleton label="Loading the policy" />;
  if (detail.error) return <Alert>{detail.error.message}</Alert>;
  return <Editor detail={detail.data} />;
}

type Refusal = { message: string; issues: string[]; stale: boolean };

function blockedReason(opts: { canEdit: boolean; dirty: boolean; check: CheckState; formInvalid: boolean }): string | null {
  const { check } = opts;
  if (!opts.canEdit) return "Only an Airlock admin can save policies.";
  if (!opts.dirty) return "No changes to save.";
  if (opts.formInvalid || check.formErrors.length > 0) return "Fix the form errors before saving.";
  if (check.pending) return "Checking…";
  const issues = check.review.issues.length;
  if (issues > 0) return `Saving is refused while the rules violate the model (${issues} ${issues === 1 ? "violation" : "violations"}).`;
  return null;
}

function Editor({ detail }: { detail: PolicyDetail }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const { kind, canEdit } = detail;
  const [baseVersion, setBaseVersion] = useState(detail.version);
  const form = useForm<PolicyDefinitionInput, unknown, PolicyDefinition>({
    resolver: zodResolver(zPolicyDefinition),
    mode: "onChange",
    defaultValues: detail.current.definition,
  });
  const [check, setCheck] = useState<CheckState>({ review: detail.review, formErrors: [], pending: false, error: null });
  const [refusal, setRefusal] = useState<Refusal | null>(null);
  const { isDirty, isValid } = form.formState;
  useUnsavedChangesGuard(isDirty && canEdit);

  const save = useMutation(
    trpc.policies.save.mutationOptions({
      onSuccess: async (saved) => {
        form.reset(saved.policy.current.definition);
        setBaseVersion(saved.policy.version);
        setRefusal(null);
        toast.success(`Saved ${saved.policy.name} as version ${saved.policy.version}`);
        await Promise.all([
          queryClient.invalidateQueries({ queryKey: trpc.policies.byKind.queryKey({ kind }) }),
          queryClient.invalidateQueries({ queryKey: trpc.policies.versions.queryKey({ kind }) }),
          queryClient.invalidateQueries({ queryKey: trpc.policies.list.queryKey() }),
        ]);
      },
      onError: (err) => {
        const raw = err.data?.details?.issues;
        const issues = Array.isArray(raw) ? raw.map((i: { message?: unknown }) => String(i.message ?? i)) : [];
        setRefusal({ message: err.message, issues, stale: err.data?.code === "CONFLICT" });
        toast.error(err.message);
      },
    }),
  );

  const reload = () => {
    form.reset(detail.current.definition);
    setBaseVersion(detail.version);
    setRefusal(null);
  };

  const blocked = blockedReason({ canEdit, dirty: isDirty, check, formInvalid: !isValid });
  const onSubmit = form.handleSubmit((definition) => save.mutate({ kind, expectedVersion: baseVersion, definition }));
  const definition = detail.current.definition;

  return (
    <div className="space-y-6">
      <header className="space-y-1">
        <div className="text-sm text-zinc-500">
          <Link href="/policies" className="hover:underline">
            Policies
          </Link>{" "}
          / <span className="font-mono">{kind}</span>
        </div>
        <div className="flex flex-wrap items-center gap-2">
          <h1 className="text-xl font-semibold">{detail.name}</h1>
          <Badge tone="neutral" data-testid="current-version">
            v{baseVersion}
          </Badge>
          <span className="font-mono text-xs text-zinc-400" title={detail.current.digest}>
            {detail.current.digest.slice(0, 19)}…
          </span>
        </div>
        {detail.description && <p className="text-sm text-zinc-600 dark:text-zinc-400">{detail.description}</p>}
      </header>

      {!canEdit && (
        <ReadOnlyNote reason="only an Airlock admin can change policies. You can still try facts against the rules." />
      )}
      {detail.version > baseVersion && (
        <Alert as="div" role="alert" tone="warning" variant="banner" className="flex flex-wrap items-center gap-2">
          Version {detail.version} was saved since you opened this page; saving your edits would be refused.
          <Button type="button" size="sm" onClick={reload}>
            Load v{detail.version} (discards your edits)
          </Button>
        </Alert>
      )}

      <FormProvider {...form}>
        <LiveCheck onState={setCheck} />
        <div className="grid grid-cols-1 gap-6 lg:grid-cols-[minmax(0,3fr)_minmax(0,2fr)]">
          <form onSubmit={onSubmit} aria-label="Rules" className="space-y-3" noValidate>
            <div className="sticky top-12 z-10 flex flex-wrap items-center gap-3 border-b border-zinc-200 bg-zinc-50/95 py-2 dark:border-zinc-800 dark:bg-zinc-950/95">
              <h2 className="text-xs font-semibold tracking-wide text-zinc-500 uppercase">Rules</h2>
              {canEdit && (
                <>
                  <Button type="submit" variant="primary" size="sm" disabled={blocked !== null || save.isPending} title={blocked ?? undefined}>
                    {save.isPending ? "Saving…" : `Save as v${baseVersion + 1}`}
                  </Button>
                  <Button type="button" size="sm" disabled={!isDirty || save.isPending} onClick={() => form.reset()}>
                    Discard changes
                  </Button>
                </>
              )}
              {blocked && canEdit && (
                <span className="text-xs text-zinc-500" data-testid="save-blocked-reason">
                  {blocked}
                </span>
              )}
            </div>
            {refusal && (
              <Alert as="div" variant="banner">
                <p className="font-medium">The server refused to save: {refusal.message}</p>
                {refusal.issues.length > 0 && (
                  <ul className="mt-1 list-disc pl-5">
                    {refusal.issues.map((i) => <li key={i}>{i}</li>)}
                  </ul>
                )}
                {refusal.stale && (
                  <Button type="button" size="sm" className="mt-2" onClick={() => void queryClient.invalidateQueries({ queryKey: trpc.policies.byKind.queryKey({ kind }) })}>
                    Fetch the latest version
                  </Button>
                )}
              </Alert>
            )}
            <fieldset disabled={!canEdit} className="min-w-0">
              <RulesEditor properties={definition.properties} disabled={!canEdit} checks={check.review.checks} />
            </fieldset>
          </form>
          <aside className="space-y-6 lg:sticky lg:top-14 lg:max-h-[calc(100vh-4rem)] lg:self-start lg:overflow-y-auto">
            <CheckPanel state={check} />
            <TryItPanel kind={kind} properties={definition.properties} dirty={isDirty} />
          </aside>
        </div>
      </FormProvider>

      <PolicyModel definition={definition} />
      <VersionHistory kind={kind} />
    </div>
  );
}
