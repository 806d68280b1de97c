import { randomBytes } from "node:crypto";
import type { Db } from "@/server/db";
import { transaction } from "@/server/db";
import { repositoryRole, roleAtLeast, type SessionUser } from "@/server/auth/roles";
import { AppError } from "@/server/errors";
import { sha256 } from "@/server/lib/digest";
import { auditActorOf, type UserActor } from "../actor";
import { recordAudit } from "../audit";
import { parseInput } from "../input";
import { zCreateApiTokenInput } from "./schemas";

// API tokens for REST and the CLI. A token is shown once; only its sha256 is stored (it is 32
// random bytes, so a fast hash is enough: there is nothing to guess). It acts as its owner, on
// the repositories it names, at most at its role: the cap is applied on every check
// (server/auth/roles.ts), against the owner's role at the time of use, so a token never does
// more than its owner could that day. Creating, revoking and every use are audited.

export const TOKEN_PREFIX = "airlock_";
const tokenHashOf = (token: string) => sha256(token);

const publicFields = {
  id: true,
  name: true,
  kind: true,
  role: true,
  repositoryIds: true,
  prefix: true,
  createdAt: true,
  expiresAt: true,
  lastUsedAt: true,
  revokedAt: true,
} as const;

export async function createApiToken(opts: { db: Db; owner: UserActor; input: unknown; now?: Date }) {
  if (opts.owner.apiToken) throw new AppError("FORBIDDEN", "A token cannot make tokens; sign in to the console.", { reason: "token_cannot_manage_tokens" });
  const input = parseInput(zCreateApiTokenInput, opts.input);
  const now = opts.now ?? new Date();
  const repositoryIds = [...new Set(input.repositoryIds)].sort();
  // A token never exceeds its owner: the owner needs the role on every repository it names, and a
  // service token (a credential for automation, outliving a person's session) needs admin there.
  const needed = input.kind === "service" ? "admin" : input.role;
  for (const repositoryId of repositoryIds) {
    const role = await repositoryRole(opts.db, opts.owner, repositoryId);
    if (!roleAtLeast(role, needed)) {
      throw new AppError(
        "FORBIDDEN",
        input.kind === "service" && roleAtLeast(role, input.role)
          ? "A service token needs the admin role on each repository it names."
          : `A token cannot exceed your own role: you are ${role ?? "not a member"} on a repository it names, and it asks for ${input.role}.`,
        { reason: "token_exceeds_owner", details: { repositoryId, role, needed } },
      );
    }
  }
  const token = TOKEN_PREFIX + randomBytes(32).toString("base64url");
  return transaction(opts.db, "createApiToken", async (tx) => {
    const row = await tx.apiToken.create({
      data: {
        name: input.name,
        kind: input.kind,
        role: input.role,
        repositoryIds,
        ownerId: opts.owner.id,
        prefix: token.slice(0, TOKEN_PREFIX.length + 6),
        tokenHash: tokenHashOf(token),
        createdAt: now,
        expiresAt: input.expiresInDays ? new Date(now.getTime() + input.expiresInDays * 86_400_000) : null,
      },
      select: publicFields,
    });
    await recordAudit(tx, {
      actor: auditActorOf(opts.owner),
      action: "api_token.create",
      objectType: "ApiToken",
      objectId: row.id,
      detail: { name: row.name, kind: row.kind, role: row.role, repositoryIds, expiresAt: row.expiresAt?.toISOString() ?? null },
    });
    // The token leaves the server once, here.
    return { ...row, token };
  });
}

/** The owner's tokens (a global admin: everyone's service tokens too), newest first; never a hash. */
export async function listApiTokens(opts: { db: Db; owner: UserActor }) {
  const rows = await opts.db.apiToken.findMany({
    where: opts.owner.isAdmin ? { OR: [{ ownerId: opts.owner.id }, { kind: "service" }] } : { ownerId: opts.owner.id },
    orderBy: [{ createdAt: "desc" }, { id: "desc" }],
    select: { ...publicFields, owner: { select: { id: true, email: true } } },
  });
  const names = new Map(
    (await opts.db.repository.findMany({ where: { id: { in: [...new Set(rows.flatMap((r) => r.repositoryIds))] } }, select: { id: true, fullName: true } })).map((r) => [r.id, r.fullName]),
  );
  return rows.map((r) => ({ ...r, repositories: r.repositoryIds.map((id) => ({ id, fullName: names.get(id) ?? null })) }));
}

export async function revokeApiToken(opts: { db: Db; actor: UserActor; tokenId: string; now?: Date }) {
  if (opts.actor.apiToken) throw new AppError("FORBIDDEN", "A token cannot revoke tokens; sign in to the console.", { reason: "token_cannot_manage_tokens" });
  const now = opts.now ?? new Date();
  return transaction(opts.db, "revokeApiToken", async (tx) => {
    const row = await tx.apiToken.findUnique({ where: { id: opts.tokenId }, select: { id: true, ownerId: true, kind: true, name: true, revokedAt: true } });
    // Someone else's personal token is not even named to a non-owner.
    if (!row || (row.ownerId !== opts.actor.id && !(opts.actor.isAdmin && row.kind === "service"))) throw new AppError("NOT_FOUND", "No such token.");
    if (row.revokedAt) throw new AppError("CONFLICT", "This token is already revoked.", { reason: "already_revoked" });
    const updated = await tx.apiToken.update({ where: { id: row.id }, data: { revokedAt: now }, select: publicFields });
    await recordAudit(tx, {
      actor: auditActorOf(opts.actor),
      action: "api_token.revoke",
      objectType: "ApiToken",
      objectId: row.id,
      detail: { name: row.name, kind: row.kind },
    });
    return updated;
  });
}

export type TokenAuth = { ok: true; user: SessionUser } | { ok: false; reason: string };

/** The principal of a bearer token, or why there is none. Marks the token used. */
export async function authenticateApiToken(opts: { db: Db; token: string; now?: Date }): Promise<TokenAuth> {
  const now = opts.now ?? new Date();
  if (!opts.token.startsWith(TOKEN_PREFIX) || opts.token.length > 200) return { ok: false, reason: "Not an Airlock API token." };
  const row = await opts.db.apiToken.findUnique({
    where: { tokenHash: tokenHashOf(opts.token) },
    select: { id: true, name: true, kind: true, role: true, repositoryIds: true, revokedAt: true, expiresAt: true, owner: { select: { id: true, email: true, name: true, isAdmin: true } } },
  });
  if (!row) return { ok: false, reason: "Unknown API token." };
  if (row.revokedAt) return { ok: false, reason: "This API token was revoked." };
  if (row.expiresAt && row.expiresAt <= now) return { ok: false, reason: "This API token has expired." };
  await opts.db.apiToken.update({ where: { id: row.id }, data: { lastUsedAt: now } });
  const kind = row.kind === "service" ? "service" : "personal";
  return {
    ok: true,
    user: {
      id: row.owner.id,
      // What the audit log names as the actor of everything the token does.
      email: kind === "service" ? `${row.owner.email} (service token ${row.name})` : `${row.owner.email} (token ${row.name})`,
      name: row.owner.name,
      isAdmin: false,
      apiToken: { tokenId: row.id, kind, name: row.name, role: row.role, repositoryIds: row.repositoryIds, ownerIsAdmin: row.owner.isAdmin },
    },
  };
}

/** One audit row per request a token makes (what it called and how it ended). */
export function recordTokenUse(db: Db, user: SessionUser, use: { method: string; path: string; status: number }) {
  const token = user.apiToken;
  if (!token) return Promise.resolve(null);
  return recordAudit(db, {
    actor: auditActorOf(user),
    action: "api_token.use",
    objectType: "ApiToken",
    objectId: token.tokenId,
    detail: { method: use.method, path: use.path.slice(0, 500), status: use.status },
  });
}
