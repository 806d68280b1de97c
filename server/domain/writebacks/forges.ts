import type { Db } from "@/server/db";
import { findRepository } from "@/server/domain/evaluation/load";
import { githubClient, installationToken, type GithubAppCredentials } from "@/server/forges/github/client";
import { createGithubForge } from "@/server/forges/github/write-back";
import { createLocalForge } from "@/server/forges/local/write-back";
import { type Forge, ForgeError } from "@/server/forges/types";

// Which forge executes a repository's write-backs. On GitHub: the GitHub App's installation token
// scoped to the repository when an installation covers it (writes appear as the app's bot), else
// the personal token (GITHUB_TOKEN, the documented second choice).

export type ForgeSettings = {
  dataDir: string;
  ciTimeoutMs: number;
  toolchainNodeModules?: string | null;
  githubToken?: string | null;
  githubApiUrl?: string | null;
  githubApp?: GithubAppCredentials | null;
};

/** The token for one GitHub repository: its installation's, else the personal token, else a clear refusal. */
export function githubTokenFor(db: Db, settings: Pick<ForgeSettings, "githubToken" | "githubApiUrl" | "githubApp">) {
  return async (repository: string): Promise<string> => {
    if (settings.githubApp) {
      const row = await findRepository(db, repository);
      if (row?.githubInstallationId != null) {
        return (await installationToken({ app: settings.githubApp, installationId: row.githubInstallationId.toString(), repository, baseUrl: settings.githubApiUrl })).token;
      }
    }
    if (settings.githubToken) return settings.githubToken;
    throw new ForgeError(`No GitHub App installation covers ${repository} and no GITHUB_TOKEN is configured, so Airlock cannot write to GitHub.`, "unsupported");
  };
}

export function forgeResolver(db: Db, settings: ForgeSettings): (repository: { fullName: string; forge: string }) => Forge {
  let local: Forge | null = null;
  let github: Forge | null = null;
  return (repository) => {
    if (repository.forge === "local") {
      local ??= createLocalForge({ db, dataDir: settings.dataDir, ciTimeoutMs: settings.ciTimeoutMs, toolchainNodeModules: settings.toolchainNodeModules ?? null });
      return local;
    }
    if (repository.forge === "github") {
      if (!settings.githubToken && !settings.githubApp) throw new ForgeError("Neither a GitHub App nor a GITHUB_TOKEN is configured, so Airlock cannot write to GitHub.", "unsupported");
      const tokenFor = githubTokenFor(db, settings);
      github ??= createGithubForge({ clientFor: (name) => githubClient({ auth: { kind: "resolved", token: () => tokenFor(name) }, baseUrl: settings.githubApiUrl }) });
      return github;
    }
    throw new ForgeError(`no forge for ${repository.forge}`, "unsupported");
  };
}
