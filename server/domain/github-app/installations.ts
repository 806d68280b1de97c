import type { components } from "@octokit/openapi-webhooks-types";
import { z } from "zod";
import type { Db, Tx } from "@/server/db";
import { transaction } from "@/server/db";
import { systemActor, type SystemActor } from "../actor";
import { recordAudit, type AuditActor } from "../audit";

// `installation` and `installation_repositories` deliveries register, update and disable
// repositories. A signed delivery proves GitHub sent it, not that it is ours to act on: the
// installation must belong to the configured app, a repository must belong to the account the
// app is installed on, and a repository Airlock already knows keeps its identity (another GitHub
// repository that took the name, another active installation, or a local-forge repository of the
// same name is refused and named in the delivery's detail for an admin to decide).

const zRepo = z.object({ id: z.number().int().positive(), full_name: z.string().min(3).max(200).regex(/^[A-Za-z0-9_.-]+\/[A-Za-z0-9_.-]+$/), private: z.boolean() });
const zInstallation = z.object({
  id: z.number().int().positive(),
  app_id: z.number().int().positive(),
  account: z.object({ login: z.string().min(1).max(100) }).nullable(),
});
const zSender = z.object({ login: z.string().min(1).max(100) });

export const zInstallationEvent = z.object({
  action: z.enum(["created", "deleted", "suspend", "unsuspend", "new_permissions_accepted"]),
  installation: zInstallation,
  repositories: z.array(zRepo).max(10_000).optional(),
  sender: zSender,
});
export const zInstallationRepositoriesEvent = z.object({
  action: z.enum(["added", "removed"]),
  installation: zInstallation,
  repositories_added: z.array(zRepo).max(10_000),
  repositories_removed: z.array(zRepo).max(10_000),
  sender: zSender,
});

type Schemas = components["schemas"];
type Assert<T extends true> = T;
type Fits<Theirs, Ours> = [Theirs] extends [Ours] ? true : false;
type Repo = z.infer<typeof zRepo>;
// Not exported: tsc checks that GitHub's published payloads carry what these schemas read.
type _InstallationConformance = [
  Assert<Fits<Pick<Schemas["installation"], "id" | "app_id">, Pick<z.infer<typeof zInstallation>, "id" | "app_id">>>,
  Assert<Fits<Pick<NonNullable<Schemas["webhook-installation-created"]["repositories"]>[number], keyof Repo>, Repo>>,
  Assert<Fits<Pick<Schemas["webhook-installation-repositories-removed"]["repositories_removed"][number], keyof Repo>, Repo>>,
  Assert<Fits<Pick<Schemas["webhook-installation-repositories-added"]["repositories_added"][number], keyof Repo>, Repo>>,
  Assert<Fits<Schemas["webhook-installation-created"]["sender"]["login"], string>>,
];

export const isInstallationEvent = (event: string) => event === "installation" || event === "installation_repositories";

/** What GitHub says about a repository when asked with the installation's token (default branch). */
export type RepositoryLookup = (installationId: number, fullName: string) => Promise<{ defaultBranch: string } | null>;

export type InstallationOutcome = { outcome: "processed" | "ignored" | "rejected"; detail: string; registered: string[]; updated: string[]; disabled: string[]; refused: string[] };

export async function applyInstallationDelivery(opts: {
  db: Db;
  event: string;
  payload: unknown;
  /** The configured app's id; null: no app is configured, so nothing is registered. */
  appId: number | null;
  githubUrl: string;
  lookUp?: RepositoryLookup | null;
  now?: Date;
}): Promise<InstallationOutcome> {
  const now = opts.now ?? new Date();
  const empty = { registered: [], updated: [], disabled: [], refused: [] };
  const parsed = opts.event === "installation" ? zInstallationEvent.safeParse(opts.payload) : zInstallationRepositoriesEvent.safeParse(opts.payload);
  if (!parsed.success) {
    const fields = parsed.error.issues.slice(0, 5).map((i) => `${i.path.join(".") || "(payload)"}: ${i.message}`);
    return { outcome: "rejected", detail: `not an ${opts.event} payload: ${fields.join("; ")}`, ...empty };
  }
  const p = parsed.data;
  if (opts.appId === null) return { outcome: "ignored", detail: "no GitHub App is configured in Airlock (Settings → GitHub)", ...empty };
  if (p.installation.app_id !== opts.appId) return { outcome: "ignored", detail: `installation ${p.installation.id} is of app ${p.installation.app_id}, not Airlock's app ${opts.appId}`, ...empty };
  const account = p.installation.account?.login ?? null;
  const installationId = p.installation.id;
  const actor = systemActor(`github:${p.sender.login}`);

  let add: Repo[] = [];
  let remove: Repo[] = [];
  let disableAll: string | null = null;
  let enableSuspended = false;
  if ("repositories_added" in p) {
    add = p.repositories_added;
    remove = p.repositories_removed;
  } else if (p.action === "created" || p.action === "new_permissions_accepted") {
    add = p.repositories ?? [];
  } else if (p.action === "deleted") {
    disableAll = `the GitHub App was uninstalled from ${account ?? "its account"}`;
  } else if (p.action === "suspend") {
    disableAll = `the GitHub App's installation on ${account ?? "its account"} is suspended`;
  } else {
    enableSuspended = true;
  }

  // Ask GitHub for the default branch before the transaction (network outside it).
  const branches = new Map<number, string>();
  for (const r of add.slice(0, 100)) {
    const found = await opts.lookUp?.(installationId, r.full_name).catch(() => null);
    if (found) branches.set(r.id, found.defaultBranch);
  }

  const out: InstallationOutcome = { outcome: "processed", detail: "", ...empty, registered: [], updated: [], disabled: [], refused: [] };
  await transaction(opts.db, "applyInstallationDelivery", async (tx) => {
    for (const r of add) {
      const owner = r.full_name.split("/")[0] as string;
      if (!account || owner.toLowerCase() !== account.toLowerCase()) {
        out.refused.push(`${r.full_name}: not owned by ${account ?? "the installation's account"}`);
        continue;
      }
      await registerOne(tx, { repo: r, installationId, defaultBranch: branches.get(r.id) ?? null, githubUrl: opts.githubUrl, actor, out });
    }
    for (const r of remove) {
      const row = await tx.repository.findFirst({ where: { githubRepoId: BigInt(r.id), githubInstallationId: BigInt(installationId) } });
      if (!row || row.disabledAt) continue;
      await disable(tx, row.id, `removed from the GitHub App's installation on ${account ?? "its account"}`, now, actor);
      out.disabled.push(row.fullName);
    }
    if (disableAll) {
      const rows = await tx.repository.findMany({ where: { githubInstallationId: BigInt(installationId), disabledAt: null } });
      for (const row of rows) {
        await disable(tx, row.id, disableAll, now, actor);
        out.disabled.push(row.fullName);
      }
    }
    if (enableSuspended) {
      // Only what the installation disabled: an admin's "disabled" stays until a person enables it.
      const rows = await tx.repository.findMany({ where: { githubInstallationId: BigInt(installationId), disabledBy: "installation", disabledReason: { contains: "is suspended" } } });
      for (const row of rows) {
        await tx.repository.update({ where: { id: row.id }, data: { disabledAt: null, disabledReason: null, disabledBy: null } });
        await recordAudit(tx, { actor, action: "repository.enable", objectType: "Repository", objectId: row.id, repositoryId: row.id, detail: { installationId, reason: "installation unsuspended" } });
        out.updated.push(row.fullName);
      }
    }
  });
  const parts = [
    out.registered.length ? `registered ${out.registered.join(", ")}` : null,
    out.updated.length ? `updated ${out.updated.join(", ")}` : null,
    out.disabled.length ? `disabled ${out.disabled.join(", ")}` : null,
    out.refused.length ? `refused ${out.refused.join("; ")}` : null,
  ].filter(Boolean);
  const changed = out.registered.length + out.updated.length + out.disabled.length > 0;
  if (!changed) return { ...out, outcome: "ignored", detail: `installation ${installationId} ${p.action}: no repository changed${parts.length ? `; ${parts.join("; ")}` : ""}`.slice(0, 2000) };
  return { ...out, detail: `installation ${installationId} ${p.action}: ${parts.join("; ")}`.slice(0, 2000) };
}

/**
 * Registers (or binds) one repository of an installation, with the refusals above. Also used
 * when an admin adds a repository from an installation (`extra` lands in the audit detail).
 */
export async function registerOne(
  tx: Tx,
  a: { repo: Repo; installationId: number; defaultBranch: string | null; githubUrl: string; actor: AuditActor; out: InstallationOutcome; extra?: Record<string, string> },
) {
  const { repo, installationId, out } = a;
  const byId = await tx.repository.findUnique({ where: { githubRepoId: BigInt(repo.id) } });
  const byName = byId ?? (await tx.repository.findFirst({ where: { fullName: { equals: repo.full_name, mode: "insensitive" } } }));
  const visibility = repo.private ? ("private" as const) : ("public" as const);
  if (byName && byName.forge !== "github") {
    out.refused.push(`${repo.full_name}: a local-forge repository has this name`);
    return;
  }
  if (byName && byName.githubRepoId !== null && byName.githubRepoId !== BigInt(repo.id)) {
    out.refused.push(`${repo.full_name}: Airlock knows another GitHub repository (id ${byName.githubRepoId}) by this name`);
    return;
  }
  if (byName && byName.githubInstallationId !== null && byName.githubInstallationId !== BigInt(installationId) && byName.disabledAt === null) {
    out.refused.push(`${repo.full_name}: registered through another installation (${byName.githubInstallationId})`);
    return;
  }
  if (byName) {
    // A rename keeps the row (same GitHub id): the name follows GitHub. The installation enables
    // again only what an installation disabled: an admin's "disabled" is a person's decision.
    const adminDisabled = byName.disabledAt !== null && byName.disabledBy === "admin";
    await tx.repository.update({
      where: { id: byName.id },
      data: {
        fullName: repo.full_name,
        githubRepoId: BigInt(repo.id),
        githubInstallationId: BigInt(installationId),
        visibility,
        ...(adminDisabled ? {} : { disabledAt: null, disabledReason: null, disabledBy: null }),
        ...(a.defaultBranch ? { defaultBranch: a.defaultBranch } : {}),
      },
    });
    await recordAudit(tx, { actor: a.actor, action: "repository.github.bind", objectType: "Repository", objectId: byName.id, repositoryId: byName.id, detail: { installationId, githubRepoId: repo.id, ...(adminDisabled ? { keptDisabled: "disabled by an admin" } : {}), ...a.extra } });
    out.updated.push(adminDisabled ? `${repo.full_name} (stays disabled: an admin disabled it)` : repo.full_name);
    return;
  }
  const created = await tx.repository.create({
    data: {
      fullName: repo.full_name,
      forge: "github",
      cloneUrl: `${a.githubUrl.replace(/\/+$/, "")}/${repo.full_name}.git`,
      defaultBranch: a.defaultBranch ?? "main",
      visibility,
      githubRepoId: BigInt(repo.id),
      githubInstallationId: BigInt(installationId),
    },
  });
  await recordAudit(tx, { actor: a.actor, action: "repository.register", objectType: "Repository", objectId: created.id, repositoryId: created.id, detail: { via: "github_app", installationId, githubRepoId: repo.id, ...a.extra } });
  out.registered.push(repo.full_name);
}

async function disable(tx: Tx, repositoryId: string, reason: string, now: Date, actor: SystemActor) {
  await tx.repository.update({ where: { id: repositoryId }, data: { disabledAt: now, disabledReason: reason, disabledBy: "installation" } });
  await recordAudit(tx, { actor, action: "repository.disable", objectType: "Repository", objectId: repositoryId, repositoryId, detail: { reason } });
}
