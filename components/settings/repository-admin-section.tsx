"use client";

import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useRouter } from "next/navigation";
import { useState } from "react";
import { toast } from "sonner";
import { useTRPC } from "@/components/providers/trpc";
import { Alert } from "@/components/ui/alert";
import { Badge } from "@/components/ui/badge";
import { Button } from "@/components/ui/button";
import { Card, cardVariants } from "@/components/ui/card";
import { cn } from "@/components/ui/cn";
import { Dialog } from "@/components/ui/dialog";
import { filterControlClass } from "@/components/ui/filter-controls";
import { zUpdateRepositoryDetailsInput } from "@/server/domain/repositories/schemas";

// A repository's own details (default branch, check command, trust tier, visibility), its
// enabled state and its removal, on its settings page. The procedures decide; the controls say
// beforehand who may change what (a repository admin: the default branch and the state; an
// Airlock admin: everything, and removal).

type Details = { defaultBranch: string; checkCommand: string | null; trustTier: "trusted" | "untrusted"; visibility: "public" | "private" | "internal" };
type Props = {
  repositoryId: string;
  fullName: string;
  forge: "github" | "local";
  version: number;
  details: Details;
  role: string | null;
  isAirlockAdmin: boolean;
  disabled: { at: Date; reason: string | null; by: string | null } | null;
  removal: { runs: number; openRuns: number; approvals: number; liveApprovals: number; memberships: number; gitData: string | null };
};

const field = "block text-xs";
const labelText = "block font-medium text-zinc-700 dark:text-zinc-300";

export function RepositoryAdminSection(props: Props) {
  const isRepoAdmin = props.role === "admin";
  return (
    <>
      <DetailsForm key={props.version} {...props} isRepoAdmin={isRepoAdmin} />
      <StateSection {...props} isRepoAdmin={isRepoAdmin} />
    </>
  );
}

function useRefresh(repositoryId: string) {
  const trpc = useTRPC();
  const qc = useQueryClient();
  return async () => {
    await qc.invalidateQueries({ queryKey: trpc.repositorySettings.get.queryKey({ repositoryId }) });
    await qc.invalidateQueries({ queryKey: trpc.repositorySettings.list.queryKey() });
  };
}

function DetailsForm(props: Props & { isRepoAdmin: boolean }) {
  const trpc = useTRPC();
  const refresh = useRefresh(props.repositoryId);
  const [values, setValues] = useState({ ...props.details, checkCommand: props.details.checkCommand ?? "" });
  const [invalid, setInvalid] = useState<string | null>(null);
  const save = useMutation(
    trpc.repositorySettings.updateDetails.mutationOptions({
      onSuccess: async (saved) => {
        toast.success(`Saved the details (v${saved.version})`);
        await refresh();
      },
    }),
  );
  const adminOnly = !props.isAirlockAdmin ? "Only an Airlock admin changes this." : undefined;
  const set = <K extends keyof typeof values>(k: K, v: (typeof values)[K]) => setValues((old) => ({ ...old, [k]: v }));
  return (
    <section aria-label="Repository details" className="space-y-2">
      <h2 className="text-sm font-semibold">
        Details <Badge tone="muted">v{props.version}</Badge>
      </h2>
      {!props.isRepoAdmin && <Alert tone="neutral" variant="banner">Only a repository admin (or an Airlock admin) changes these; you are {props.role ?? "no member"}.</Alert>}
      <form
        aria-label="Repository details form"
        noValidate
        className={cn(cardVariants(), "space-y-3")}
        onSubmit={(e) => {
          e.preventDefault();
          const input = { ...values, repositoryId: props.repositoryId, expectedVersion: props.version };
          const parsed = zUpdateRepositoryDetailsInput.safeParse(input);
          setInvalid(parsed.success ? null : (parsed.error.issues[0]?.message ?? "Invalid input"));
          if (parsed.success && !save.isPending) save.mutate(input);
        }}
      >
        <fieldset disabled={!props.isRepoAdmin || save.isPending} className="grid gap-3 sm:grid-cols-2">
          <label className={field}>
            <span className={labelText}>Default branch</span>
            <input className={filterControlClass} name="defaultBranch" value={values.defaultBranch} maxLength={200} onChange={(e) => set("defaultBranch", e.target.value)} />
            <span className="block text-zinc-500">{props.forge === "local" ? "Must exist in the local forge (push it first)." : "GitHub's own; the app's installation events update it too."}</span>
          </label>
          <label className={field}>
            <span className={labelText}>Check command (local CI)</span>
            <input
              className={`${filterControlClass} w-full font-mono`}
              name="checkCommand"
              value={values.checkCommand}
              maxLength={1000}
              disabled={!props.isAirlockAdmin || props.forge !== "local"}
              title={props.forge !== "local" ? "Its checks run on GitHub." : adminOnly}
              onChange={(e) => set("checkCommand", e.target.value)}
            />
            <span className="block text-zinc-500">
              {props.forge !== "local"
                ? "None: this repository's checks run on GitHub."
                : "Runs in the agents' sandbox (no network, no secrets, only its checkout writable). It decides what every commit's check proves, so only an Airlock admin sets it. Empty: no check."}
            </span>
          </label>
          <label className={field}>
            <span className={labelText}>Trust tier</span>
            <select className={filterControlClass} name="trustTier" value={values.trustTier} disabled={!props.isAirlockAdmin} title={adminOnly} onChange={(e) => set("trustTier", e.target.value as Details["trustTier"])}>
              <option value="trusted">trusted</option>
              <option value="untrusted">untrusted</option>
            </select>
            <span className="block text-zinc-500">Untrusted: every run of it goes to an untrusted pool, without privileged secrets. Fork heads are untrusted either way.</span>
          </label>
          <label className={field}>
            <span className={labelText}>Visibility</span>
            <select className={filterControlClass} name="visibility" value={values.visibility} disabled={!props.isAirlockAdmin} title={adminOnly} onChange={(e) => set("visibility", e.target.value as Details["visibility"])}>
              <option value="private">private</option>
              <option value="internal">internal</option>
              <option value="public">public</option>
            </select>
            <span className="block text-zinc-500">What the forge says; part of the agent&apos;s context. Who sees it in Airlock is decided by roles alone.</span>
          </label>
        </fieldset>
        {(invalid ?? save.error?.message) && <Alert>{invalid ?? save.error?.message}</Alert>}
        {props.isRepoAdmin && (
          <Button type="submit" variant="primary" disabled={save.isPending}>
            {save.isPending ? "Saving…" : "Save details"}
          </Button>
        )}
      </form>
    </section>
  );
}

function StateSection(props: Props & { isRepoAdmin: boolean }) {
  const trpc = useTRPC();
  const refresh = useRefresh(props.repositoryId);
  const router = useRouter();
  const [reason, setReason] = useState("");
  const [removing, setRemoving] = useState(false);
  const setEnabled = useMutation(
    trpc.repositorySettings.setEnabled.mutationOptions({
      onSuccess: async (r) => {
        toast.success(`${r.fullName} is ${r.disabled ? "disabled" : "enabled"}`);
        setReason("");
        await refresh();
      },
    }),
  );
  return (
    <section aria-label="Repository state" className="space-y-2">
      <h2 className="text-sm font-semibold">State</h2>
      <Card className="space-y-3">
        {props.disabled ? (
          <p className="text-sm">
            <Badge tone="warning">disabled</Badge> {props.disabled.by === "installation" ? "by the GitHub App's installation" : "by an admin"}: {props.disabled.reason ?? "no reason given"}. Nothing dispatches and its deliveries are ignored.
          </p>
        ) : (
          <p className="text-sm">
            <Badge tone="success">enabled</Badge> Its deliveries are evaluated and its runs dispatch.
          </p>
        )}
        {props.isRepoAdmin && (
          <div className="flex flex-wrap items-end gap-2">
            {props.disabled ? (
              <Button type="button" disabled={setEnabled.isPending} onClick={() => setEnabled.mutate({ repositoryId: props.repositoryId, enabled: true })}>
                Enable
              </Button>
            ) : (
              <>
                <label className={field}>
                  <span className={labelText}>Why disable it</span>
                  <input className={`${filterControlClass} w-72`} name="disableReason" value={reason} maxLength={300} onChange={(e) => setReason(e.target.value)} />
                </label>
                <Button type="button" disabled={setEnabled.isPending || reason.trim() === ""} onClick={() => setEnabled.mutate({ repositoryId: props.repositoryId, enabled: false, reason })}>
                  Disable
                </Button>
              </>
            )}
            {props.isAirlockAdmin && (
              <Button type="button" variant="danger" className="ml-auto" onClick={() => setRemoving(true)}>
                Remove…
              </Button>
            )}
          </div>
        )}
        {setEnabled.error && <Alert>{setEnabled.error.message}</Alert>}
      </Card>
      {props.isAirlockAdmin && (
        <RemoveDialog
          {...props}
          open={removing}
          onClose={() => setRemoving(false)}
          onRemoved={async () => {
            setRemoving(false);
            await refresh();
            router.push("/settings/repositories");
          }}
        />
      )}
    </section>
  );
}

function RemoveDialog(props: Props & { open: boolean; onClose: () => void; onRemoved: () => Promise<void> }) {
  const trpc = useTRPC();
  const [confirm, setConfirm] = useState("");
  const [reason, setReason] = useState("");
  const remove = useMutation(
    trpc.repositorySettings.remove.mutationOptions({
      onSuccess: async (r) => {
        toast.success(`Removed ${r.fullName}`);
        await props.onRemoved();
      },
    }),
  );
  const r = props.removal;
  const busy = r.openRuns > 0 || r.liveApprovals > 0;
  return (
    <Dialog open={props.open} onClose={props.onClose} title={`Remove ${props.fullName}`}>
      <div className="space-y-3 text-sm">
        <h2 className="font-semibold">Remove {props.fullName}?</h2>
        <ul className="list-disc space-y-1 pl-5" aria-label="What removal does">
          <li>
            Its {r.runs} run{r.runs === 1 ? "" : "s"}, {r.approvals} approval{r.approvals === 1 ? "" : "s"} with their write-backs, its deliveries and its audit trail are kept as history, seen by
            Airlock admins. Nothing is deleted.
          </li>
          <li>It is disabled for good: nothing dispatches, and deliveries for it are ignored as removed. Its name stays taken.</li>
          <li>Its {r.memberships} membership{r.memberships === 1 ? " ends" : "s end"} (recorded in the audit entry), so its members no longer see it.</li>
          <li>{r.gitData ? <>The local forge&apos;s git data stays on disk at <code className="break-all">{r.gitData}</code>; delete it by hand if you want it gone.</> : "Nothing changes on GitHub."}</li>
          <li>It is refused while a run is queued, running or waiting for approval, or an approval is pending or approved and not yet executed.</li>
        </ul>
        {busy && (
          <Alert tone="warning" variant="banner">
            Not now: {r.openRuns} open run{r.openRuns === 1 ? "" : "s"} and {r.liveApprovals} live approval{r.liveApprovals === 1 ? "" : "s"}. Cancel or finish them first.
          </Alert>
        )}
        <form
          className="space-y-2"
          aria-label="Confirm removal"
          onSubmit={(e) => {
            e.preventDefault();
            if (!remove.isPending) remove.mutate({ repositoryId: props.repositoryId, confirmFullName: confirm, reason });
          }}
        >
          <label className={field}>
            <span className={labelText}>Why remove it</span>
            <input className={`${filterControlClass} w-full`} name="removeReason" value={reason} maxLength={300} required onChange={(e) => setReason(e.target.value)} />
          </label>
          <label className={field}>
            <span className={labelText}>Type {props.fullName} to confirm</span>
            <input className={`${filterControlClass} w-full font-mono`} name="confirmFullName" value={confirm} maxLength={140} autoComplete="off" onChange={(e) => setConfirm(e.target.value)} />
          </label>
          {remove.error && <Alert>{remove.error.message}</Alert>}
          <div className="flex justify-end gap-2">
            <Button type="button" onClick={props.onClose}>
              Cancel
            </Button>
            <Button type="submit" variant="danger" disabled={remove.isPending || confirm !== props.fullName || reason.trim() === ""}>
              {remove.isPending ? "Removing…" : "Remove repository"}
            </Button>
          </div>
        </form>
      </div>
    </Dialog>
  );
}
