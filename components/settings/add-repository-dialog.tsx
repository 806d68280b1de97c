"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import Link from "next/link";
import { useRouter } from "next/navigation";
import { useState } from "react";
import { toast } from "sonner";
import type { z } from "zod";
import { useTRPC } from "@/components/providers/trpc";
import { Alert } from "@/components/ui/alert";
import { Button } from "@/components/ui/button";
import { Dialog } from "@/components/ui/dialog";
import { filterControlClass } from "@/components/ui/filter-controls";
import { zCreateLocalRepositoryInput, zRegisterGithubRepositoryInput } from "@/server/domain/repositories/schemas";

// "Add repository" (Airlock admins), three ways: a repository of the GitHub App's installation,
// a GitHub repository by URL or owner/name (written to with GITHUB_TOKEN when no installation
// covers it), or a new repository of the local forge. Each open of the dialog has one request
// id per way: a retried or double-clicked "Add" adds one repository.

type Way = "installation" | "github" | "local";
const WAYS: { way: Way; label: string }[] = [
  { way: "installation", label: "From the GitHub App" },
  { way: "github", label: "GitHub URL or name" },
  { way: "local", label: "New local repository" },
];

const firstIssue = (error: z.ZodError) => error.issues[0] ? `${error.issues[0].path.join(".") || "input"}: ${error.issues[0].message}` : "Invalid input";

export function AddRepositoryDialog({ open, onClose }: { open: boolean; onClose: () => void }) {
  const [way, setWay] = useState<Way>("installation");
  return (
    <Dialog open={open} onClose={onClose} title="Add repository" className="max-w-2xl">
      <div className="space-y-3">
        <div role="tablist" aria-label="How to add it" className="flex flex-wrap gap-1 border-b border-zinc-200 pb-2 dark:border-zinc-800">
          {WAYS.map((w) => (
            <Button key={w.way} type="button" role="tab" size="sm" aria-selected={way === w.way} variant={way === w.way ? "primary" : "ghost"} onClick={() => setWay(w.way)}>
              {w.label}
            </Button>
          ))}
        </div>
        {way === "installation" && <FromInstallation onDone={onClose} />}
        {way === "github" && <ByGithubName onDone={onClose} />}
        {way === "local" && <NewLocal onDone={onClose} />}
      </div>
    </Dialog>
  );
}

function useAdded(onDone: () => void) {
  const trpc = useTRPC();
  const qc = useQueryClient();
  const router = useRouter();
  return async (repo: { id: string; fullName: string; created: boolean }) => {
    toast.success(repo.created ? `Added ${repo.fullName}` : `${repo.fullName} was added already`);
    await qc.invalidateQueries({ queryKey: trpc.repositorySettings.list.queryKey() });
    await qc.invalidateQueries({ queryKey: trpc.repositorySettings.installationCandidates.queryKey() });
    onDone();
    router.refresh();
  };
}

function Field(props: { label: string; hint?: string; children: React.ReactNode }) {
  return (
    <label className="block text-xs">
      <span className="block font-medium text-zinc-700 dark:text-zinc-300">{props.label}</span>
      {props.children}
      {props.hint && <span className="mt-0.5 block text-zinc-500">{props.hint}</span>}
    </label>
  );
}

function FromInstallation({ onDone }: { onDone: () => void }) {
  const trpc = useTRPC();
  const candidates = useQuery(trpc.repositorySettings.installationCandidates.queryOptions(undefined, { staleTime: 30_000 }));
  const [requestId, setRequestId] = useState(() => crypto.randomUUID());
  const added = useAdded(onDone);
  const register = useMutation(
    trpc.repositorySettings.registerFromInstallation.mutationOptions({
      onSuccess: async (repo) => {
        setRequestId(crypto.randomUUID());
        await added(repo);
      },
    }),
  );
  if (candidates.isPending) return <p className="text-sm text-zinc-500">Asking GitHub for the app&apos;s installations…</p>;
  if (candidates.error) return <Alert>{candidates.error.message}</Alert>;
  const data = candidates.data;
  if (!data.configured) {
    return (
      <Alert as="div" tone="info" variant="banner">
        No GitHub App is configured, so there are no installations to add from. Create the app (or enter an existing one) on{" "}
        <Link href="/settings/github" className="font-medium underline">Settings → GitHub</Link>, install it on your repositories on GitHub, and they are registered as the installation
        events arrive; the ones already installed are listed here. Without an app, add a repository by its GitHub URL (written to with <code>GITHUB_TOKEN</code>).
      </Alert>
    );
  }
  if (data.error) return <Alert>{data.error}</Alert>;
  const open = data.installations.flatMap((i) => i.repositories.filter((r) => !r.registeredId).map((r) => ({ ...r, installationId: i.id, account: i.account })));
  return (
    <div className="space-y-2">
      {data.installations.length === 0 && <p className="text-sm text-zinc-600 dark:text-zinc-400">The app has no installations yet: install it on GitHub (Settings → GitHub has the link).</p>}
      {data.installations
        .filter((i) => i.suspended || i.error)
        .map((i) => (
          <Alert key={i.id} tone="warning">
            Installation {i.id} ({i.account ?? "unknown account"}): {i.suspended ? "suspended" : i.error}
          </Alert>
        ))}
      {data.installations.length > 0 && open.length === 0 && <p className="text-sm text-zinc-600 dark:text-zinc-400">Every repository of the app&apos;s installations is registered already.</p>}
      {open.length > 0 && (
        <ul className="divide-y divide-zinc-100 rounded-md border border-zinc-200 dark:divide-zinc-800 dark:border-zinc-800" aria-label="Installation repositories not yet registered">
          {open.map((r) => (
            <li key={`${r.installationId}:${r.id}`} className="flex items-center gap-2 px-3 py-1.5 text-sm">
              <span className="font-medium">{r.fullName}</span>
              <span className="text-xs text-zinc-500">
                {r.visibility} · {r.defaultBranch} · installation {r.installationId}
              </span>
              <Button type="button" size="sm" className="ml-auto" disabled={register.isPending} onClick={() => register.mutate({ requestId, installationId: r.installationId, fullName: r.fullName })}>
                Add
              </Button>
            </li>
          ))}
        </ul>
      )}
      {register.error && <Alert>{register.error.message}</Alert>}
    </div>
  );
}

function ByGithubName({ onDone }: { onDone: () => void }) {
  const trpc = useTRPC();
  const [fullName, setFullName] = useState("");
  const [defaultBranch, setDefaultBranch] = useState("main");
  const [visibility, setVisibility] = useState<"private" | "public" | "internal">("private");
  const [requestId, setRequestId] = useState(() => crypto.randomUUID());
  const [invalid, setInvalid] = useState<string | null>(null);
  const added = useAdded(onDone);
  const register = useMutation(
    trpc.repositorySettings.register.mutationOptions({
      onSuccess: async (repo) => {
        setRequestId(crypto.randomUUID());
        await added(repo);
      },
    }),
  );
  return (
    <form
      aria-label="Register a GitHub repository"
      className="space-y-3"
      noValidate
      onSubmit={(e) => {
        e.preventDefault();
        const parsed = zRegisterGithubRepositoryInput.safeParse({ requestId, fullName, defaultBranch, visibility });
        setInvalid(parsed.success ? null : firstIssue(parsed.error));
        if (parsed.success && !register.isPending) register.mutate({ requestId, fullName, defaultBranch, visibility });
      }}
    >
      <p className="text-xs text-zinc-500">
        With the GitHub App installed on it, the installation registers it by itself and Airlock writes with the installation&apos;s token. Otherwise Airlock writes with <code>GITHUB_TOKEN</code> (a personal
        token, the second choice), and its pull requests get no Airlock check run with &quot;Diagnose with agent&quot; and &quot;Attempt repair&quot;: GitHub
        lets only an app write check runs. Its earlier deliveries can be re-evaluated on the deliveries page once it is registered.
      </p>
      <Field label="GitHub URL or owner/name" hint="https://github.com/acme/widgets, git@github.com:acme/widgets.git or acme/widgets">
        <input className={filterControlClass} name="fullName" value={fullName} maxLength={300} required onChange={(e) => setFullName(e.target.value)} placeholder="acme/widgets" />
      </Field>
      <div className="flex flex-wrap gap-3">
        <Field label="Default branch">
          <input className={filterControlClass} name="defaultBranch" value={defaultBranch} maxLength={200} required onChange={(e) => setDefaultBranch(e.target.value)} />
        </Field>
        <VisibilitySelect value={visibility} onChange={setVisibility} />
      </div>
      {(invalid ?? register.error?.message) && <Alert>{invalid ?? register.error?.message}</Alert>}
      <div className="flex justify-end">
        <Button type="submit" variant="primary" disabled={register.isPending}>
          {register.isPending ? "Registering…" : "Register repository"}
        </Button>
      </div>
    </form>
  );
}

function VisibilitySelect({ value, onChange }: { value: "private" | "public" | "internal"; onChange: (v: "private" | "public" | "internal") => void }) {
  return (
    <Field label="Visibility">
      <select className={filterControlClass} name="visibility" value={value} onChange={(e) => onChange(e.target.value as "private" | "public" | "internal")}>
        <option value="private">private</option>
        <option value="internal">internal</option>
        <option value="public">public</option>
      </select>
    </Field>
  );
}

function NewLocal({ onDone }: { onDone: () => void }) {
  const trpc = useTRPC();
  const [fullName, setFullName] = useState("");
  const [defaultBranch, setDefaultBranch] = useState("main");
  const [visibility, setVisibility] = useState<"private" | "public" | "internal">("private");
  const [checkCommand, setCheckCommand] = useState("");
  const [requestId, setRequestId] = useState(() => crypto.randomUUID());
  const [invalid, setInvalid] = useState<string | null>(null);
  const added = useAdded(onDone);
  const create = useMutation(
    trpc.repositorySettings.createLocal.mutationOptions({
      onSuccess: async (repo) => {
        setRequestId(crypto.randomUUID());
        await added(repo);
      },
    }),
  );
  return (
    <form
      aria-label="Create a local repository"
      className="space-y-3"
      noValidate
      onSubmit={(e) => {
        e.preventDefault();
        const parsed = zCreateLocalRepositoryInput.safeParse({ requestId, fullName, defaultBranch, visibility, checkCommand });
        setInvalid(parsed.success ? null : firstIssue(parsed.error));
        if (parsed.success && !create.isPending) create.mutate({ requestId, fullName, defaultBranch, visibility, checkCommand });
      }}
    >
      <p className="text-xs text-zinc-500">
        A bare git repository in Airlock&apos;s local forge (in the data folder), with a first commit (a README) on its default branch. Push to it with git; the local CI runs its check
        command on a branch&apos;s tip from the repository&apos;s page.
      </p>
      <Field label="owner/name">
        <input className={filterControlClass} name="fullName" value={fullName} maxLength={140} required onChange={(e) => setFullName(e.target.value)} placeholder="team/service" />
      </Field>
      <div className="flex flex-wrap gap-3">
        <Field label="Default branch">
          <input className={filterControlClass} name="defaultBranch" value={defaultBranch} maxLength={200} required onChange={(e) => setDefaultBranch(e.target.value)} />
        </Field>
        <VisibilitySelect value={visibility} onChange={setVisibility} />
      </div>
      <Field label="Check command (optional)" hint="What the local CI runs for the check in a checkout of the branch, e.g. npm test. It runs in the agents' sandbox: no network, no secrets, only its checkout writable. Empty: no check.">
        <input className={`${filterControlClass} w-full font-mono`} name="checkCommand" value={checkCommand} maxLength={1000} onChange={(e) => setCheckCommand(e.target.value)} placeholder="npm test" />
      </Field>
      {(invalid ?? create.error?.message) && <Alert>{invalid ?? create.error?.message}</Alert>}
      <div className="flex justify-end">
        <Button type="submit" variant="primary" disabled={create.isPending}>
          {create.isPending ? "Creating…" : "Create repository"}
        </Button>
      </div>
    </form>
  );
}
