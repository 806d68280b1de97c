"use client";

import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { toast } from "sonner";
import { useTRPC } from "@/components/providers/trpc";
import { Alert } from "@/components/ui/alert";
import { Button } from "@/components/ui/button";
import { Card } from "@/components/ui/card";
import { filterControlClass } from "@/components/ui/filter-controls";

// Register a GitHub repository by name (Airlock admins). With the GitHub App installed on it,
// the installation event registers it by itself; this is for the personal-token path, or to
// register before the installation arrives. Deliveries it already sent can then be re-evaluated.

export function RegisterRepository() {
  const trpc = useTRPC();
  const qc = useQueryClient();
  const [fullName, setFullName] = useState("");
  const [defaultBranch, setDefaultBranch] = useState("main");
  const register = useMutation(
    trpc.repositorySettings.register.mutationOptions({
      onSuccess: async (repo) => {
        toast.success(`Registered ${repo.fullName}`);
        setFullName("");
        await qc.invalidateQueries({ queryKey: trpc.repositorySettings.list.queryKey() });
      },
    }),
  );
  return (
    <Card as="section" aria-label="Register a GitHub repository">
      <h2 className="text-sm font-semibold">Register a GitHub repository</h2>
      <p className="text-xs text-zinc-500">Installing the GitHub App (Settings → GitHub) registers its repositories by itself. Here: by name, written to with the installation token when an installation covers it, else GITHUB_TOKEN.</p>
      <form
        className="mt-2 flex flex-wrap items-end gap-2"
        onSubmit={(e) => {
          e.preventDefault();
          register.mutate({ fullName, defaultBranch });
        }}
      >
        <label className="text-xs">
          <span className="block text-zinc-600 dark:text-zinc-400">owner/name</span>
          <input className={filterControlClass} name="fullName" value={fullName} maxLength={140} required onChange={(e) => setFullName(e.target.value)} placeholder="acme/widgets" />
        </label>
        <label className="text-xs">
          <span className="block text-zinc-600 dark:text-zinc-400">Default branch</span>
          <input className={filterControlClass} name="defaultBranch" value={defaultBranch} maxLength={255} required onChange={(e) => setDefaultBranch(e.target.value)} />
        </label>
        <Button type="submit" size="sm" disabled={register.isPending}>
          Register repository
        </Button>
      </form>
      {register.error && <Alert>{register.error.message}</Alert>}
    </Card>
  );
}
