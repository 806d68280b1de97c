import type { Db } from "@/server/db";
import { createGithubForge } from "@/server/forges/github/write-back";
import { createLocalForge } from "@/server/forges/local/write-back";
import { type Forge, ForgeError } from "@/server/forges/types";

// Which forge executes a repository's write-backs.

export type ForgeSettings = {
  dataDir: string;
  ciTimeoutMs: number;
  toolchainNodeModules?: string | null;
  githubToken?: string | null;
  githubApiUrl?: string | null;
};

export function forgeResolver(db: Db, settings: ForgeSettings): (repository: { fullName: string; forge: string }) => Forge {
  let local: Forge | null = null;
  let github: Forge | null = null;
  return (repository) => {
    if (repository.forge === "local") {
      local ??= createLocalForge({ db, dataDir: settings.dataDir, ciTimeoutMs: settings.ciTimeoutMs, toolchainNodeModules: settings.toolchainNodeModules ?? null });
      return local;
    }
    if (repository.forge === "github") {
      if (!settings.githubToken) throw new ForgeError("No GITHUB_TOKEN is configured, so Airlock cannot write to GitHub.", "unsupported");
      github ??= createGithubForge({ token: settings.githubToken, baseUrl: settings.githubApiUrl ?? undefined });
      return github;
    }
    throw new ForgeError(`no forge for ${repository.forge}`, "unsupported");
  };
}
