"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { toast } from "sonner";
import { useTRPC } from "@/components/providers/trpc";
import { Alert } from "@/components/ui/alert";
import { Button } from "@/components/ui/button";
import { Card } from "@/components/ui/card";
import { filterControlClass } from "@/components/ui/filter-controls";

// Settings → GitHub (Airlock admins): create Airlock's GitHub App from its manifest (the browser
// posts the manifest to GitHub, GitHub redirects back with a one-time code), or enter an
// existing app. Secrets go to the server once and never come back.

export function GithubAppSettings(props: { created: boolean; error: string | null }) {
  const trpc = useTRPC();
  const qc = useQueryClient();
  const q = useQuery(trpc.githubApp.get.queryOptions());
  const [name, setName] = useState("Airlock");
  const [organization, setOrganization] = useState("");
  const [existing, setExisting] = useState({ appId: "", privateKey: "", webhookSecret: "" });
  const refresh = () => qc.invalidateQueries({ queryKey: trpc.githubApp.get.queryKey() });
  const start = useMutation(
    trpc.githubApp.startManifest.mutationOptions({
      onSuccess: (res) => {
        // GitHub's manifest flow starts with a form POST from the browser to github.com.
        const form = document.createElement("form");
        form.method = "post";
        form.action = res.postUrl;
        form.hidden = true;
        const manifest = document.createElement("input");
        manifest.type = "hidden";
        manifest.name = "manifest";
        manifest.value = res.manifest;
        form.append(manifest);
        document.body.append(form);
        form.submit();
      },
    }),
  );
  const save = useMutation(
    trpc.githubApp.saveExisting.mutationOptions({
      onSuccess: async () => {
        toast.success("GitHub App saved");
        setExisting({ appId: "", privateKey: "", webhookSecret: "" });
        await refresh();
      },
    }),
  );
  const remove = useMutation(trpc.githubApp.remove.mutationOptions({ onSuccess: refresh }));
  const data = q.data;
  return (
    <div className="space-y-4">
      <div>
        <h1 className="text-xl font-semibold">GitHub App</h1>
        <p className="text-sm text-zinc-600 dark:text-zinc-400">Airlock talks to GitHub as its own app: installation events register and disable repositories, and each call uses a short-lived token scoped to one repository.</p>
      </div>
      {props.created && <Alert tone="info">The GitHub App was created. Install it on the repositories Airlock should see.</Alert>}
      {props.error && <Alert>{props.error}</Alert>}
      {q.error && <Alert>{q.error.message}</Alert>}
      {data?.app.configured ? (
        <Card as="section" aria-label="Configured app" className="space-y-2 text-sm">
          <p>
            <a className="font-medium text-indigo-700 hover:underline dark:text-indigo-400" href={data.app.htmlUrl}>{data.app.name}</a> (app {data.app.appId}, {data.app.source === "manifest" ? "created from Airlock's manifest" : "an existing app"}{data.app.ownerLogin ? `, owned by ${data.app.ownerLogin}` : ""})
          </p>
          <p>
            <a className="text-indigo-700 hover:underline dark:text-indigo-400" href={data.app.installUrl}>Install it on repositories</a>; each installation registers its repositories here.
          </p>
          <Button variant="secondary" size="sm" onClick={() => remove.mutate({ confirm: true })} disabled={remove.isPending}>
            Remove the app from Airlock
          </Button>
          <p className="text-xs text-zinc-500">Removing it stops installation tokens and the app&apos;s webhook secret; registered repositories stay (write-backs fall back to GITHUB_TOKEN if set).</p>
        </Card>
      ) : (
        <>
          <Card as="section" aria-label="Create the app" className="space-y-2">
            <h2 className="text-sm font-semibold">Create it on GitHub</h2>
            <form
              className="flex flex-wrap items-end gap-2"
              onSubmit={(e) => {
                e.preventDefault();
                start.mutate({ name, ...(organization ? { organization } : {}) });
              }}
            >
              <label className="text-xs">
                <span className="block">App name</span>
                <input className={filterControlClass} value={name} maxLength={34} onChange={(e) => setName(e.target.value)} required />
              </label>
              <label className="text-xs">
                <span className="block">Organisation (blank: your account)</span>
                <input className={filterControlClass} value={organization} maxLength={39} onChange={(e) => setOrganization(e.target.value)} />
              </label>
              <Button type="submit" size="sm" disabled={start.isPending}>
                Create GitHub App
              </Button>
            </form>
            {/* The manifest goes to GitHub in a plain form post, as GitHub's manifest flow requires. */}
            {start.error && <Alert>{start.error.message}</Alert>}
          </Card>
          <Card as="section" aria-label="Use an existing app" className="space-y-2">
            <h2 className="text-sm font-semibold">Or use an existing app</h2>
            <form
              className="grid max-w-xl gap-2 text-xs"
              onSubmit={(e) => {
                e.preventDefault();
                save.mutate({ appId: Number(existing.appId), privateKey: existing.privateKey, webhookSecret: existing.webhookSecret });
              }}
            >
              <label>
                App id <input className={filterControlClass} inputMode="numeric" value={existing.appId} onChange={(e) => setExisting({ ...existing, appId: e.target.value })} required />
              </label>
              <label>
                Private key (.pem)
                <textarea className="block h-24 w-full rounded-md border border-zinc-300 p-1 font-mono dark:border-zinc-700 dark:bg-zinc-900" value={existing.privateKey} maxLength={20000} onChange={(e) => setExisting({ ...existing, privateKey: e.target.value })} required />
              </label>
              <label>
                Webhook secret <input type="password" autoComplete="off" className={filterControlClass} value={existing.webhookSecret} maxLength={500} onChange={(e) => setExisting({ ...existing, webhookSecret: e.target.value })} required />
              </label>
              <Button type="submit" size="sm" disabled={save.isPending}>
                Check with GitHub and save
              </Button>
            </form>
            {save.error && <Alert>{save.error.message}</Alert>}
          </Card>
        </>
      )}
      {data && (
        <Card as="section" aria-label="Permissions" className="text-xs">
          <h2 className="text-sm font-semibold">Permissions the app asks for</h2>
          <ul className="mt-1 space-y-0.5">
            {data.permissions.map((p) => (
              <li key={p.name}>
                <code>{p.name}: {p.level}</code> — {p.why}
              </li>
            ))}
          </ul>
          <p className="mt-2 text-zinc-500">Webhook URL: <code>{data.webhookUrl}</code>. Personal token (GITHUB_TOKEN, the second choice): {data.personalTokenConfigured ? "set" : "not set"}.</p>
        </Card>
      )}
    </div>
  );
}
