import { z } from "zod";
import type { Db } from "@/server/db";
import { transaction } from "@/server/db";
import { AppError } from "@/server/errors";
import { recordAudit } from "../audit";
import { requireAdmin } from "./access";
import { auditActorOf, type UserActor } from "../actor";

// An Airlock admin registers a GitHub repository by name (the personal-token path, or before the
// app's installation event arrives). Installation events register and update repositories too
// (github-app/installations.ts); the row is the same, and a later installation binds to it.

export const zRegisterGithubRepositoryInput = z.object({
  fullName: z
    .string()
    .trim()
    .max(140)
    .regex(/^[A-Za-z0-9-]{1,39}\/[A-Za-z0-9_.-]{1,100}$/, "owner/name, as GitHub spells it"),
  defaultBranch: z.string().trim().min(1).max(255).regex(/^[^\s~^:?*[\\]+$/, "a branch name").default("main"),
  visibility: z.enum(["public", "private", "internal"]).default("private"),
});

export async function registerGithubRepository(opts: { db: Db; actor: UserActor; input: z.infer<typeof zRegisterGithubRepositoryInput>; githubUrl: string }) {
  requireAdmin(opts.actor, "register a repository");
  const { fullName, defaultBranch, visibility } = opts.input;
  return transaction(opts.db, "registerGithubRepository", async (tx) => {
    const existing = await tx.repository.findFirst({ where: { fullName: { equals: fullName, mode: "insensitive" } }, select: { id: true } });
    if (existing) throw new AppError("CONFLICT", `${fullName} is registered already.`, { reason: "exists" });
    const repo = await tx.repository.create({
      data: { fullName, forge: "github", defaultBranch, visibility, cloneUrl: `${opts.githubUrl.replace(/\/+$/, "")}/${fullName}.git` },
      select: { id: true, fullName: true },
    });
    await recordAudit(tx, { actor: auditActorOf(opts.actor), action: "repository.register", objectType: "Repository", objectId: repo.id, repositoryId: repo.id, detail: { via: "ui", forge: "github" } });
    return repo;
  });
}
