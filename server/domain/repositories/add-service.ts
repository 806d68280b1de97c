import { existsSync } from "node:fs";
import { pathToFileURL } from "node:url";
import type { z } from "zod";
import { advisoryLock } from "@/server/db/advisory-lock";
import type { Db, Tx } from "@/server/db";
import { AppError } from "@/server/errors";
import { listInstallationRepositories, type InstallationListing } from "@/server/forges/github/installation-repositories";
import { bareRepoPath, commitFiles, ensureBareRepo } from "@/server/forges/local/repositories";
import { recordAudit } from "../audit";
import { loadGithubAppCredentials } from "../github-app/app-service";
import { registerOne, type InstallationOutcome } from "../github-app/installations";
import type { SealingKey } from "../github-app/sealed";
import { auditActorOf, type UserActor } from "../actor";
import { requireAdmin } from "../access";
import { zCreateLocalRepositoryInput, zRegisterFromInstallationInput, zRegisterGithubRepositoryInput } from "./schemas";
import { fieldError, parseInput } from "../input";
import { refusableTransaction, type Refuse } from "../refusable";

// "Add repository" (Airlock admins), three ways: a repository of the GitHub App's installation,
// a GitHub repository by name or URL (the personal-token path, or before the installation event
// arrives), or a new repository of the local forge: a real bare git repository with a first
// commit on its default branch. Each request carries an id: a retried or double-clicked request
// finds the first one's audit entry under a lock on the name and answers with the same
// repository, so one click adds one repository.

export type AddedRepository = { id: string; fullName: string; forge: "github" | "local"; created: boolean };

/** Serialises adds of one name (any case), then answers a request seen before with its repository. */
async function lockAndReplay(tx: Tx, fullName: string, requestId: string | undefined): Promise<AddedRepository | null> {
  await advisoryLock(tx, `airlock.repository.add:${fullName.toLowerCase()}`);
  if (!requestId) return null;
  const [earlier] = await tx.$queryRaw<{ objectId: string }[]>`
    SELECT "objectId" FROM "AuditEntry"
    WHERE "objectType" = 'Repository' AND "action" IN ('repository.register', 'repository.github.bind') AND "detail"->>'requestId' = ${requestId}
    ORDER BY "createdAt" ASC LIMIT 1`;
  if (!earlier) return null;
  const repo = await tx.repository.findUnique({ where: { id: earlier.objectId }, select: { id: true, fullName: true, forge: true } });
  return repo ? { ...repo, created: false } : null;
}

async function refuseTaken(tx: Tx, refuse: Refuse, fullName: string) {
  const taken = await tx.repository.findFirst({ where: { fullName: { equals: fullName, mode: "insensitive" } }, select: { fullName: true, forge: true, removedAt: true } });
  if (taken?.removedAt) {
    refuse(fieldError("CONFLICT", "fullName", `${taken.fullName} was removed on ${taken.removedAt.toISOString().slice(0, 10)}; its runs and audit trail keep the name, so it cannot be added again.`, "removed"));
  }
  if (taken) refuse(fieldError("CONFLICT", "fullName", `${taken.fullName} is registered already (${taken.forge}).`, "exists"));
}

/** A GitHub repository by name or URL; written to with an installation's token when one covers it, else GITHUB_TOKEN. */
export async function registerGithubRepository(opts: { db: Db; actor: UserActor; input: unknown; githubUrl: string }): Promise<AddedRepository> {
  requireAdmin(opts.actor, "register a repository");
  const { requestId, fullName, defaultBranch, visibility } = parseInput(zRegisterGithubRepositoryInput, opts.input);
  return refusableTransaction(opts.db, "registerGithubRepository", async (tx, refuse) => {
    const replay = await lockAndReplay(tx, fullName, requestId);
    if (replay) return replay;
    await refuseTaken(tx, refuse, fullName);
    const repo = await tx.repository.create({
      data: { fullName, forge: "github", defaultBranch, visibility, cloneUrl: `${opts.githubUrl.replace(/\/+$/, "")}/${fullName}.git` },
      select: { id: true, fullName: true },
    });
    await recordAudit(tx, {
      actor: auditActorOf(opts.actor),
      action: "repository.register",
      objectType: "Repository",
      objectId: repo.id,
      repositoryId: repo.id,
      detail: { via: "ui", forge: "github", defaultBranch, visibility, ...(requestId ? { requestId } : {}) },
    });
    return { ...repo, forge: "github" as const, created: true };
  });
}

/**
 * A new local-forge repository: `<dataDir>/forge/<owner>/<name>.git`, initialised bare with a
 * first commit (a README) on its default branch, and an optional check command for the local CI.
 * The git work happens under the name's lock, inside the transaction: a failure leaves no row.
 * Git data already at the path (not Airlock's: no row names it) is never adopted.
 */
export async function createLocalRepository(opts: { db: Db; actor: UserActor; input: unknown; dataDir: string; now?: Date }): Promise<AddedRepository> {
  requireAdmin(opts.actor, "create a repository");
  const input: z.output<typeof zCreateLocalRepositoryInput> = parseInput(zCreateLocalRepositoryInput, opts.input);
  const path = bareRepoPath(opts.dataDir, input.fullName);
  return refusableTransaction(opts.db, "createLocalRepository", async (tx, refuse) => {
    const replay = await lockAndReplay(tx, input.fullName, input.requestId);
    if (replay) return replay;
    await refuseTaken(tx, refuse, input.fullName);
    if (existsSync(path)) {
      refuse(fieldError("CONFLICT", "fullName", `The local forge holds git data for ${input.fullName} already (${path}) that no repository names: move it away, or choose another name.`, "git_data_exists"));
    }
    await ensureBareRepo(opts.dataDir, input.fullName, input.defaultBranch);
    const readme = `# ${input.fullName}\n\nA repository of Airlock's local forge.${input.checkCommand ? `\n\nThe local CI runs \`${input.checkCommand}\` as its check.` : ""}\n`;
    const sha = await commitFiles({ repoPath: path, branch: input.defaultBranch, files: { "README.md": readme }, message: "Initial commit", date: opts.now });
    const repo = await tx.repository.create({
      data: {
        fullName: input.fullName,
        forge: "local",
        defaultBranch: input.defaultBranch,
        visibility: input.visibility,
        checkCommand: input.checkCommand,
        cloneUrl: pathToFileURL(path).href,
      },
      select: { id: true, fullName: true },
    });
    await recordAudit(tx, {
      actor: auditActorOf(opts.actor),
      action: "repository.register",
      objectType: "Repository",
      objectId: repo.id,
      repositoryId: repo.id,
      detail: { via: "ui", forge: "local", requestId: input.requestId, defaultBranch: input.defaultBranch, initialCommit: sha, checkCommand: input.checkCommand },
    });
    return { ...repo, forge: "local" as const, created: true };
  });
}

type InstallationCandidates =
  | { configured: false }
  | { configured: true; error: string | null; installations: (Omit<InstallationListing, "repositories"> & { repositories: (InstallationListing["repositories"][number] & { registeredId: string | null })[] })[] };

/** The app's installations and their repositories, each with the Airlock repository it is (or null: not yet registered). */
export async function installationCandidates(opts: { db: Db; actor: UserActor; key: SealingKey; apiUrl?: string | null }): Promise<InstallationCandidates> {
  requireAdmin(opts.actor, "add a repository");
  const app = await loadGithubAppCredentials(opts.db, opts.key);
  if (!app) return { configured: false };
  let listings: InstallationListing[];
  try {
    listings = await listInstallationRepositories({ app, baseUrl: opts.apiUrl });
  } catch (err) {
    const status = (err as { status?: number }).status;
    return { configured: true, error: `GitHub refused to list the app's installations${status ? ` (${status})` : ""}: check the app on Settings → GitHub.`, installations: [] };
  }
  const ids = listings.flatMap((l) => l.repositories.map((r) => BigInt(r.id)));
  const names = listings.flatMap((l) => l.repositories.map((r) => r.fullName));
  const known = await opts.db.repository.findMany({
    where: { OR: [{ githubRepoId: { in: ids } }, { fullName: { in: names, mode: "insensitive" } }] },
    select: { id: true, fullName: true, githubRepoId: true },
  });
  const registeredId = (r: { id: number; fullName: string }) =>
    known.find((k) => k.githubRepoId === BigInt(r.id) || k.fullName.toLowerCase() === r.fullName.toLowerCase())?.id ?? null;
  return { configured: true, error: null, installations: listings.map((l) => ({ ...l, repositories: l.repositories.map((r) => ({ ...r, registeredId: registeredId(r) })) })) };
}

/**
 * One repository of an installation. What the browser sends is only a choice: GitHub is asked
 * again whether the installation covers the repository (its id, visibility, default branch), and
 * the installation events' rules apply (owned by the installation's account, no other GitHub
 * repository or local-forge repository by the name).
 */
export async function registerFromInstallation(opts: { db: Db; actor: UserActor; input: unknown; key: SealingKey; githubUrl: string; apiUrl?: string | null }): Promise<AddedRepository> {
  requireAdmin(opts.actor, "add a repository");
  const input = parseInput(zRegisterFromInstallationInput, opts.input);
  const app = await loadGithubAppCredentials(opts.db, opts.key);
  if (!app) throw new AppError("CONFLICT", "No GitHub App is configured: set it up on Settings → GitHub first.", { reason: "no_app" });
  const listings = await listInstallationRepositories({ app, baseUrl: opts.apiUrl });
  const installation = listings.find((l) => l.id === input.installationId);
  if (!installation) throw new AppError("NOT_FOUND", `Installation ${input.installationId} is not one of the app's installations.`, { reason: "no_installation" });
  const repo = installation.repositories.find((r) => r.fullName.toLowerCase() === input.fullName.toLowerCase());
  if (!repo) throw new AppError("NOT_FOUND", `Installation ${input.installationId} does not include ${input.fullName}${installation.error ? ` (${installation.error})` : ""}.`, { reason: "not_in_installation" });
  const owner = repo.fullName.split("/")[0] ?? "";
  if (!installation.account || owner.toLowerCase() !== installation.account.toLowerCase()) {
    throw new AppError("FORBIDDEN", `${repo.fullName} is not owned by the installation's account (${installation.account ?? "unknown"}).`, { reason: "not_owned" });
  }
  return refusableTransaction(opts.db, "registerFromInstallation", async (tx, refuse) => {
    const replay = await lockAndReplay(tx, repo.fullName, input.requestId);
    if (replay) return replay;
    const out: InstallationOutcome = { outcome: "processed", detail: "", registered: [], updated: [], disabled: [], refused: [] };
    await registerOne(tx, {
      repo: { id: repo.id, full_name: repo.fullName, private: repo.visibility !== "public" },
      installationId: installation.id,
      defaultBranch: repo.defaultBranch,
      githubUrl: opts.githubUrl,
      actor: auditActorOf(opts.actor),
      out,
      extra: { requestId: input.requestId, via: "github_app_ui" },
    });
    if (out.refused.length > 0) refuse(new AppError("CONFLICT", `Not added: ${out.refused.join("; ")}.`, { reason: "refused" }));
    const row = await tx.repository.findUniqueOrThrow({ where: { githubRepoId: BigInt(repo.id) }, select: { id: true, fullName: true } });
    return { ...row, forge: "github" as const, created: out.registered.length > 0 };
  });
}
