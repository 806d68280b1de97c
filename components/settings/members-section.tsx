"use client";

import { zodResolver } from "@hookform/resolvers/zod";
import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { FormProvider, useForm } from "react-hook-form";
import { toast } from "sonner";
import { SelectField, TextField, inputClass } from "@/components/forms/fields";
import { RefusalBanner } from "@/components/forms/form-status";
import { applyServerErrors, type ServerError } from "@/components/forms/server-errors";
import { useTRPC } from "@/components/providers/trpc";
import { Badge } from "@/components/ui/badge";
import { Button } from "@/components/ui/button";
import { Table } from "@/components/ui/table";
import { zAddMemberInput, type AddMemberFormValues } from "@/server/domain/repositories/schemas";

// A repository's members and their roles. Each change names the role the list showed, so a
// change someone else made since is refused instead of overwritten; the last admin stays.

const ROLES = ["viewer", "maintainer", "admin"] as const;
type Role = (typeof ROLES)[number];
type Member = { id: string; name: string; email: string; isAdmin: boolean; role: Role };
type Right = { allowed: true; reason: null } | { allowed: false; reason: string };

export function MembersSection({ repositoryId, members, canEdit }: { repositoryId: string; members: Member[]; canEdit: Right }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const refresh = () => queryClient.invalidateQueries({ queryKey: trpc.repositorySettings.get.queryKey({ repositoryId }) });
  const onError = (e: { message: string }) => {
    toast.error(e.message);
    void refresh();
  };
  const change = useMutation(trpc.repositorySettings.changeMemberRole.mutationOptions({ onSuccess: () => { toast.success("Role changed"); void refresh(); }, onError }));
  const remove = useMutation(trpc.repositorySettings.removeMember.mutationOptions({ onSuccess: () => { toast.success("Member removed"); void refresh(); }, onError }));
  const busy = change.isPending || remove.isPending;
  return (
    <section aria-label="Members" className="space-y-3">
      <h2 className="text-sm font-semibold">Members</h2>
      <Table aria-label="Members" columns={["Person", "Role", { label: "Actions", srOnly: true }]}>
        {members.map((m) => (
          <tr key={m.id}>
            <td>
              {m.name} <span className="text-xs text-zinc-500">{m.email}</span> {m.isAdmin && <Badge tone="info">Airlock admin</Badge>}
            </td>
            <td>
              <select
                aria-label={`Role of ${m.email}`}
                className={`${inputClass} w-36`}
                value={m.role}
                disabled={!canEdit.allowed || busy}
                title={canEdit.reason ?? undefined}
                onChange={(e) => change.mutate({ repositoryId, userId: m.id, role: e.target.value as Role, expectedRole: m.role })}
              >
                {ROLES.map((r) => (
                  <option key={r} value={r}>{r}</option>
                ))}
              </select>
            </td>
            <td className="text-right">
              {canEdit.allowed && (
                <Button type="button" size="sm" variant="ghost" disabled={busy} aria-label={`Remove ${m.email}`} onClick={() => window.confirm(`Remove ${m.email} from this repository?`) && remove.mutate({ repositoryId, userId: m.id, expectedRole: m.role })}>
                  Remove
                </Button>
              )}
            </td>
          </tr>
        ))}
      </Table>
      {canEdit.allowed && <AddMember repositoryId={repositoryId} onAdded={refresh} />}
    </section>
  );
}

function AddMember({ repositoryId, onAdded }: { repositoryId: string; onAdded: () => Promise<unknown> }) {
  const trpc = useTRPC();
  const [loose, setLoose] = useState<string[]>([]);
  const form = useForm<AddMemberFormValues, unknown, AddMemberFormValues>({ resolver: zodResolver(zAddMemberInput), mode: "onTouched", defaultValues: { repositoryId, email: "", role: "viewer" } });
  const add = useMutation(trpc.repositorySettings.addMember.mutationOptions());
  const onSubmit = form.handleSubmit(async (values) => {
    try {
      await add.mutateAsync(values);
      form.reset({ repositoryId, email: "", role: values.role });
      setLoose([]);
      toast.success(`Added ${values.email}`);
      await onAdded();
    } catch (err) {
      const e = err as ServerError;
      const rest = applyServerErrors(form, e);
      const onFields = Object.keys(e.data?.fieldErrors ?? {}).length > 0 || Boolean(e.data?.details?.fieldErrors);
      setLoose(rest.length > 0 ? rest : onFields ? [] : [e.message]);
      toast.error(`Not added: ${e.message}`);
    }
  });
  return (
    <FormProvider {...form}>
      <form onSubmit={onSubmit} noValidate aria-label="Add a member" className="flex flex-wrap items-start gap-3">
        <TextField name="email" label="Add a person by email" type="email" className="w-72" />
        <SelectField name="role" label="Role" options={ROLES.map((r) => ({ value: r, label: r }))} className="w-36" />
        <Button type="submit" className="mt-5" disabled={add.isPending}>Add member</Button>
        <RefusalBanner messages={loose} />
      </form>
    </FormProvider>
  );
}
