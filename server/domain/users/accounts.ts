import { randomUUID } from "node:crypto";
import { hashPassword } from "better-auth/crypto";
import type { Db, Tx } from "@/server/db";
import { transaction } from "@/server/db";
import { AppError } from "@/server/errors";
import { auditActorOf, type UserActor } from "../actor";
import { recordAudit } from "../audit";
import { fieldError, isUniqueViolation, parseInput } from "../input";
import { type GrantedRoles, zCreateUserInput, zSetAdminInput } from "./schemas";

// Accounts are made by Airlock, never by a stranger: an admin creates one (with a first password),
// or a person accepts an admin's invitation (invitations.ts), or GitHub sign-in admits an invited
// or organisation-member account (server/auth/admission.ts). A password account is a User and a
// better-auth "credential" Account holding better-auth's own scrypt hash, so sign-in through
// better-auth works unchanged (the demo seed writes the same rows).

function requireAdmin(actor: UserActor) {
  if (!actor.isAdmin) throw new AppError("FORBIDDEN", "Only an Airlock admin can manage accounts.", { reason: "admin_only" });
}

/** Gives the roles, skipping repositories that no longer exist; returns those given. */
export async function grantRoles(tx: Tx, userId: string, roles: GrantedRoles) {
  if (roles.length === 0) return [];
  const existing = await tx.repository.findMany({ where: { id: { in: roles.map((r) => r.repositoryId) } }, select: { id: true } });
  const given = roles.filter((r) => existing.some((e) => e.id === r.repositoryId));
  await tx.membership.createMany({ data: given.map((r) => ({ userId, repositoryId: r.repositoryId, role: r.role })), skipDuplicates: true });
  return given;
}

/** A user with a password, in the caller's transaction. The hash is computed before it is called. */
export async function insertPasswordUser(
  tx: Tx,
  opts: { email: string; name: string; passwordHash: string; isAdmin: boolean; admittedVia: string; now: Date },
) {
  const taken = await tx.user.findUnique({ where: { email: opts.email }, select: { id: true } });
  if (taken) throw fieldError("CONFLICT", "email", `${opts.email} already has an account.`, "email_taken");
  const id = randomUUID();
  const user = await tx.user
    .create({
      data: { id, email: opts.email, name: opts.name, isAdmin: opts.isAdmin, admittedVia: opts.admittedVia, emailVerified: false, createdAt: opts.now, updatedAt: opts.now },
      select: { id: true, email: true, name: true, isAdmin: true },
    })
    .catch((err: unknown) => {
      // Two creations of one email at once: the second is told, not given a 500.
      throw isUniqueViolation(err) ? fieldError("CONFLICT", "email", `${opts.email} already has an account.`, "email_taken") : err;
    });
  await tx.account.create({ data: { id: `acct_${id}`, accountId: id, providerId: "credential", userId: id, password: opts.passwordHash, createdAt: opts.now, updatedAt: opts.now } });
  return user;
}

/** An admin creates an account with a first password and its roles. */
export async function createUserAccount(opts: { db: Db; actor: UserActor; input: unknown; now?: Date }) {
  requireAdmin(opts.actor);
  const input = parseInput(zCreateUserInput, opts.input);
  const now = opts.now ?? new Date();
  // scrypt (~100 ms) outside the transaction: no connection is held while it runs.
  const passwordHash = await hashPassword(input.password);
  return transaction(opts.db, "createUserAccount", async (tx) => {
    const user = await insertPasswordUser(tx, { email: input.email, name: input.name, passwordHash, isAdmin: input.isAdmin, admittedVia: "admin", now });
    const roles = await grantRoles(tx, user.id, input.roles);
    await recordAudit(tx, {
      actor: auditActorOf(opts.actor),
      action: "user.create",
      objectType: "User",
      objectId: user.id,
      detail: { email: user.email, isAdmin: input.isAdmin, roles },
    });
    return user;
  });
}

/** Makes a user a global admin, or not. The last admin cannot stop being one. */
export async function setGlobalAdmin(opts: { db: Db; actor: UserActor; input: unknown }) {
  requireAdmin(opts.actor);
  const input = parseInput(zSetAdminInput, opts.input);
  return transaction(opts.db, "setGlobalAdmin", async (tx) => {
    // Serialise admin changes: two admins demoting each other at once keep one of them.
    await tx.$executeRaw`SELECT pg_advisory_xact_lock(hashtext('airlock:global-admins'))`;
    const user = await tx.user.findUnique({ where: { id: input.userId }, select: { id: true, email: true, isAdmin: true } });
    if (!user) throw new AppError("NOT_FOUND", "No such user.");
    if (user.isAdmin === input.isAdmin) return user;
    if (!input.isAdmin && (await tx.user.count({ where: { isAdmin: true } })) <= 1) {
      throw new AppError("CONFLICT", `${user.email} is the last Airlock admin: make someone else admin first.`, { reason: "last_admin" });
    }
    const updated = await tx.user.update({ where: { id: user.id }, data: { isAdmin: input.isAdmin }, select: { id: true, email: true, isAdmin: true } });
    await recordAudit(tx, { actor: auditActorOf(opts.actor), action: input.isAdmin ? "user.admin.grant" : "user.admin.revoke", objectType: "User", objectId: user.id, detail: { email: user.email } });
    return updated;
  });
}

/** The users page: every account, how it came to be, its roles and sign-in methods. */
export async function listUsers(opts: { db: Db; actor: UserActor }) {
  requireAdmin(opts.actor);
  const users = await opts.db.user.findMany({
    orderBy: { email: "asc" },
    take: 1000,
    select: {
      id: true,
      email: true,
      name: true,
      isAdmin: true,
      admittedVia: true,
      createdAt: true,
      accounts: { select: { providerId: true } },
      memberships: { select: { role: true, repository: { select: { id: true, fullName: true } } }, orderBy: { repository: { fullName: "asc" } } },
    },
  });
  return users.map(({ accounts, memberships, ...u }) => ({
    ...u,
    signIn: [...new Set(accounts.map((a) => (a.providerId === "credential" ? "password" : a.providerId)))],
    roles: memberships.map((m) => ({ repositoryId: m.repository.id, fullName: m.repository.fullName, role: m.role })),
  }));
}
