import { createAppAuth } from "@octokit/auth-app";
import { Octokit } from "@octokit/rest";
import { z } from "zod";
import { githubClient, type GithubAppCredentials } from "./client";

// What the GitHub App's installations give Airlock access to: the app's installations (its JWT),
// then each installation's repositories (an installation token, not scoped to one repository:
// listing is all it is used for). Bounded: at most 20 installations and 1,000 repositories each.

const MAX_INSTALLATIONS = 20;
const MAX_PAGES = 10;

const zInstallation = z.object({ id: z.number().int().positive(), account: z.object({ login: z.string().max(100) }).nullable(), suspended_at: z.string().nullable().optional() });
const zRepository = z.object({
  id: z.number().int().positive(),
  full_name: z.string().max(200),
  private: z.boolean(),
  visibility: z.string().max(20).optional(),
  default_branch: z.string().max(255).optional(),
});

export type InstallationRepository = { id: number; fullName: string; visibility: "public" | "private" | "internal"; defaultBranch: string };
export type InstallationListing = { id: number; account: string | null; suspended: boolean; repositories: InstallationRepository[]; error: string | null };

const visibilityOf = (r: z.infer<typeof zRepository>): InstallationRepository["visibility"] =>
  r.visibility === "internal" ? "internal" : r.private ? "private" : "public";

export async function listInstallationRepositories(opts: { app: GithubAppCredentials; baseUrl?: string | null }): Promise<InstallationListing[]> {
  const silent = { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} };
  const auth = createAppAuth({ appId: opts.app.appId, privateKey: opts.app.privateKey, request: new Octokit({ ...(opts.baseUrl ? { baseUrl: opts.baseUrl } : {}), log: silent }).request });
  const jwt = (await auth({ type: "app" })).token;
  const asApp = githubClient({ auth: { kind: "token", token: jwt }, baseUrl: opts.baseUrl, maxWaitSeconds: 10 });
  const installations = z.array(zInstallation).parse((await asApp.request("GET /app/installations", { per_page: 100 })).data).slice(0, MAX_INSTALLATIONS);
  const out: InstallationListing[] = [];
  for (const i of installations) {
    const listing: InstallationListing = { id: i.id, account: i.account?.login ?? null, suspended: Boolean(i.suspended_at), repositories: [], error: null };
    out.push(listing);
    if (listing.suspended) continue;
    try {
      const { token } = await auth({ type: "installation", installationId: i.id });
      const asInstallation = githubClient({ auth: { kind: "token", token }, baseUrl: opts.baseUrl, maxWaitSeconds: 10 });
      for (let page = 1; page <= MAX_PAGES; page++) {
        const res = await asInstallation.request("GET /installation/repositories", { per_page: 100, page });
        const repos = z.array(zRepository).parse((res.data as { repositories: unknown }).repositories);
        listing.repositories.push(...repos.map((r) => ({ id: r.id, fullName: r.full_name, visibility: visibilityOf(r), defaultBranch: r.default_branch ?? "main" })));
        if (repos.length < 100) break;
      }
    } catch (err) {
      const status = (err as { status?: number }).status;
      listing.error = `GitHub refused to list installation ${i.id}'s repositories${status ? ` (${status})` : ""}`;
    }
  }
  return out;
}
