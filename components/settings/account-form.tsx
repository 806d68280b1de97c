"use client";

import { zodResolver } from "@hookform/resolvers/zod";
import { useMutation } from "@tanstack/react-query";
import { useState } from "react";
import { FormProvider, useForm } from "react-hook-form";
import { toast } from "sonner";
import { z } from "zod";
import { CheckboxField, inputClass, SelectField, TextField } from "@/components/forms/fields";
import { RefusalBanner } from "@/components/forms/form-status";
import { applyServerErrors, type ServerError } from "@/components/forms/server-errors";
import { useTRPC } from "@/components/providers/trpc";
import { Button } from "@/components/ui/button";
import { INVITATION_HOURS, zCreateUserInput, zInvitationInput } from "@/server/domain/users/schemas";

// Invite a person (a one-time link, shown once) or create their account with a first password,
// with the roles they get: global admin, and a role per repository. The procedures validate with
// the same schemas.

const ROLES = ["viewer", "maintainer", "admin"] as const;
type Role = (typeof ROLES)[number];
type Repo = { id: string; fullName: string };

// The form holds everything but the roles (chosen per repository below it); the expiry arrives
// from a <select> as text.
const zInviteForm = zInvitationInput.omit({ roles: true }).extend({ expiresInHours: z.coerce.number().pipe(zInvitationInput.shape.expiresInHours) });
const zCreateForm = zCreateUserInput.omit({ roles: true });
type InviteForm = z.input<typeof zInviteForm>;
type CreateForm = z.input<typeof zCreateForm>;

const hoursLabel = (h: number) => (h < 48 ? `${h} hours` : `${h / 24} days`);

function RolePicker({ repos, roles, onChange }: { repos: Repo[]; roles: Record<string, Role | "">; onChange: (next: Record<string, Role | "">) => void }) {
  if (repos.length === 0) return <p className="text-xs text-zinc-500">No repositories yet.</p>;
  return (
    <fieldset className="space-y-1">
      <legend className="mb-1 text-xs font-medium text-zinc-700 dark:text-zinc-300">Repository roles</legend>
      <div className="grid gap-x-4 gap-y-1 sm:grid-cols-2">
        {repos.map((r) => (
          <label key={r.id} className="flex items-center justify-between gap-2 text-sm">
            <span className="truncate font-mono text-xs">{r.fullName}</span>
            <select className={`${inputClass} w-32`} value={roles[r.id] ?? ""} aria-label={`Role on ${r.fullName}`} onChange={(e) => onChange({ ...roles, [r.id]: e.target.value as Role | "" })}>
              <option value="">no role</option>
              {ROLES.map((role) => (
                <option key={role} value={role}>{role}</option>
              ))}
            </select>
          </label>
        ))}
      </div>
    </fieldset>
  );
}

export function AccountForm({ repos, onDone }: { repos: Repo[]; onDone: () => Promise<unknown> }) {
  const [mode, setMode] = useState<"invite" | "create">("invite");
  return (
    <section aria-label="Add a person" className="space-y-3 rounded-lg border border-zinc-200 bg-white p-4 dark:border-zinc-800 dark:bg-zinc-900">
      <div className="flex items-center gap-2" role="group" aria-label="How to add">
        <Button type="button" size="sm" variant={mode === "invite" ? "primary" : "secondary"} aria-pressed={mode === "invite"} onClick={() => setMode("invite")}>Invite by link</Button>
        <Button type="button" size="sm" variant={mode === "create" ? "primary" : "secondary"} aria-pressed={mode === "create"} onClick={() => setMode("create")}>Create an account</Button>
      </div>
      {mode === "invite" ? <InviteForm repos={repos} onDone={onDone} /> : <CreateForm repos={repos} onDone={onDone} />}
    </section>
  );
}

const rolesOf = (roles: Record<string, Role | "">) => Object.entries(roles).flatMap(([repositoryId, role]) => (role ? [{ repositoryId, role }] : []));

/** What a refusal leaves for the banner once its field errors are on their fields. */
function useRefusal() {
  const [loose, setLoose] = useState<string[]>([]);
  return { loose, clear: () => setLoose([]), show: (rest: string[], err: unknown) => setLoose(rest.length > 0 ? rest : [(err as ServerError).message]) };
}

function InviteForm({ repos, onDone }: { repos: Repo[]; onDone: () => Promise<unknown> }) {
  const trpc = useTRPC();
  const [roles, setRoles] = useState<Record<string, Role | "">>({});
  const [link, setLink] = useState<{ email: string; url: string } | null>(null);
  const refusal = useRefusal();
  const invite = useMutation(trpc.users.invite.mutationOptions());
  const form = useForm<InviteForm, unknown, z.output<typeof zInviteForm>>({ resolver: zodResolver(zInviteForm), mode: "onTouched", defaultValues: { email: "", isAdmin: false, expiresInHours: 72 } });
  const onSubmit = form.handleSubmit(async (values) => {
    refusal.clear();
    try {
      const made = await invite.mutateAsync({ ...values, roles: rolesOf(roles) });
      setLink({ email: made.email, url: `${window.location.origin}${made.path}` });
      form.reset();
      setRoles({});
      toast.success(`Invitation for ${made.email} made`);
      await onDone();
    } catch (err) {
      refusal.show(applyServerErrors(form, err as ServerError), err);
    }
  });
  return (
    <FormProvider {...form}>
      <form onSubmit={onSubmit} noValidate aria-label="Invite by link" className="space-y-3">
        <div className="flex flex-wrap items-start gap-3">
          <TextField name="email" label="Email" type="email" className="w-72" />
          <SelectField name="expiresInHours" label="Link works for" options={INVITATION_HOURS.map((h) => ({ value: String(h), label: hoursLabel(h) }))} className="w-36" />
          <CheckboxField name="isAdmin" label="Airlock admin" hint="Every repository, pools and grants, people" className="mt-5" />
        </div>
        <RolePicker repos={repos} roles={roles} onChange={setRoles} />
        <RefusalBanner messages={refusal.loose} />
        <Button type="submit" variant="primary" disabled={invite.isPending}>{invite.isPending ? "Inviting…" : "Make the invitation link"}</Button>
        {link && (
          <div role="status" className="rounded-md border border-emerald-200 bg-emerald-50 p-2 text-sm dark:border-emerald-900 dark:bg-emerald-950">
            <p>Send this link to {link.email}. It is shown once and works once; anyone holding it can make that account.</p>
            <div className="mt-1 flex gap-2">
              <input readOnly value={link.url} aria-label="Invitation link" className={`${inputClass} font-mono text-xs`} onFocus={(e) => e.currentTarget.select()} />
              <Button type="button" size="sm" onClick={() => void navigator.clipboard?.writeText(link.url).then(() => toast.success("Link copied"))}>Copy</Button>
            </div>
          </div>
        )}
      </form>
    </FormProvider>
  );
}

function CreateForm({ repos, onDone }: { repos: Repo[]; onDone: () => Promise<unknown> }) {
  const trpc = useTRPC();
  const [roles, setRoles] = useState<Record<string, Role | "">>({});
  const refusal = useRefusal();
  const create = useMutation(trpc.users.create.mutationOptions());
  const form = useForm<CreateForm, unknown, z.output<typeof zCreateForm>>({ resolver: zodResolver(zCreateForm), mode: "onTouched", defaultValues: { email: "", name: "", password: "", isAdmin: false } });
  const onSubmit = form.handleSubmit(async (values) => {
    refusal.clear();
    try {
      const user = await create.mutateAsync({ ...values, roles: rolesOf(roles) });
      form.reset();
      setRoles({});
      toast.success(`Account for ${user.email} created: give them the password yourself`);
      await onDone();
    } catch (err) {
      refusal.show(applyServerErrors(form, err as ServerError), err);
    }
  });
  return (
    <FormProvider {...form}>
      <form onSubmit={onSubmit} noValidate aria-label="Create an account" className="space-y-3">
        <div className="flex flex-wrap items-start gap-3">
          <TextField name="email" label="Email" type="email" className="w-64" />
          <TextField name="name" label="Name" className="w-48" />
          <TextField name="password" label="First password" type="password" hint="At least 8 characters" className="w-48" />
          <CheckboxField name="isAdmin" label="Airlock admin" className="mt-5" />
        </div>
        <RolePicker repos={repos} roles={roles} onChange={setRoles} />
        <RefusalBanner messages={refusal.loose} />
        <Button type="submit" variant="primary" disabled={create.isPending}>{create.isPending ? "Creating…" : "Create the account"}</Button>
      </form>
    </FormProvider>
  );
}
