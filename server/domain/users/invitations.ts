import { randomBytes } from "node:crypto";
import { hashPassword } from "better-auth/crypto";
import type { Db, Prisma, Tx } from "@/server/db";
import { transaction } from "@/server/db";
import { AppError } from "@/server/errors";
import { sha256 } from "@/server/lib/digest";
import { auditActorOf, type UserActor } from "../actor";
import { recordAudit } from "../audit";
import { parseInput } from "../input";
import { grantRoles, insertPasswordUser } from "./accounts";
import { type GrantedRoles, zAcceptInvitationInput, zGrantedRoles, zInvitationInput, zInvitationToken } from "./schemas";

// An admin invites a person by email: a one-time link (its token is shown once; only its sha256
// is stored, so the table cannot be turned back into links) that expires. Opening it, the person
// makes their account (the email is the invitation's) and gets the invitation's roles; or signs in
// with GitHub, whose verified email must be the invitation's (server/auth/admission.ts). An
// invitation is used once: accepting marks it under its row lock, so two tabs make one account.

const tokenHashOf = (token: string) => sha256(token);

type InvitationState = "open" | "accepted" | "revoked" | "expired";

function stateOf(inv: { acceptedAt: Date | null; revokedAt: Date | null; expiresAt: Date }, now: Date): InvitationState {
  if (inv.acceptedAt) return "accepted";
  if (inv.revokedAt) return "revoked";
  return inv.expiresAt <= now ? "expired" : "open";
}

const refusal: Record<Exclude<InvitationState, "open">, string> = {
  accepted: "This invitation was already used. Sign in instead, or ask an admin for a new one.",
  revoked: "This invitation was withdrawn. Ask an admin for a new one.",
  expired: "This invitation has expired. Ask an admin for a new one.",
};

function requireAdmin(actor: UserActor) {
  if (!actor.isAdmin) throw new AppError("FORBIDDEN", "Only an Airlock admin can invite people.", { reason: "admin_only" });
}

export async function createInvitation(opts: { db: Db; actor: UserActor; input: unknown; now?: Date }) {
  requireAdmin(opts.actor);
  const input = parseInput(zInvitationInput, opts.input);
  const now = opts.now ?? new Date();
  const token = randomBytes(32).toString("base64url");
  return transaction(opts.db, "createInvitation", async (tx) => {
    if (await tx.user.findUnique({ where: { email: input.email }, select: { id: true } })) {
      throw new AppError("CONFLICT", `${input.email} already has an account: give them roles instead.`, { reason: "email_taken", details: { fieldErrors: { email: [`${input.email} already has an account`] } } });
    }
    const invitation = await tx.invitation.create({
      data: {
        email: input.email,
        tokenHash: tokenHashOf(token),
        isAdmin: input.isAdmin,
        roles: input.roles as Prisma.InputJsonValue,
        createdById: opts.actor.id,
        createdAt: now,
        expiresAt: new Date(now.getTime() + input.expiresInHours * 3_600_000),
      },
      select: { id: true, email: true, expiresAt: true },
    });
    await recordAudit(tx, {
      actor: auditActorOf(opts.actor),
      action: "user.invite",
      objectType: "Invitation",
      objectId: invitation.id,
      detail: { email: input.email, isAdmin: input.isAdmin, roles: input.roles, expiresAt: invitation.expiresAt.toISOString() },
    });
    // The token leaves the server once, here; the admin passes the link on.
    return { ...invitation, path: `/invite/${token}` };
  });
}

export async function revokeInvitation(opts: { db: Db; actor: UserActor; invitationId: string; now?: Date }) {
  requireAdmin(opts.actor);
  const now = opts.now ?? new Date();
  return transaction(opts.db, "revokeInvitation", async (tx) => {
    const rows = await tx.$queryRaw<{ id: string }[]>`SELECT "id" FROM "Invitation" WHERE "id" = ${opts.invitationId} FOR UPDATE`;
    if (rows.length === 0) throw new AppError("NOT_FOUND", "No such invitation.");
    const inv = await tx.invitation.findUniqueOrThrow({ where: { id: opts.invitationId } });
    const state = stateOf(inv, now);
    if (state !== "open") throw new AppError("CONFLICT", `This invitation is ${state}: there is nothing to withdraw.`, { reason: "not_open" });
    await tx.invitation.update({ where: { id: inv.id }, data: { revokedAt: now } });
    await recordAudit(tx, { actor: auditActorOf(opts.actor), action: "user.invite.revoke", objectType: "Invitation", objectId: inv.id, detail: { email: inv.email } });
    return { id: inv.id, state: "revoked" as const };
  });
}

export async function listInvitations(opts: { db: Db; actor: UserActor; now?: Date }) {
  requireAdmin(opts.actor);
  const now = opts.now ?? new Date();
  const rows = await opts.db.invitation.findMany({
    orderBy: { createdAt: "desc" },
    take: 200,
    select: { id: true, email: true, isAdmin: true, roles: true, createdAt: true, expiresAt: true, acceptedAt: true, revokedAt: true, createdBy: { select: { email: true } } },
  });
  return rows.map(({ createdBy, roles, ...r }) => ({ ...r, roles: zGrantedRoles.catch([]).parse(roles), invitedBy: createdBy?.email ?? null, state: stateOf(r, now) }));
}

/** What the invitation page shows before the person decides (the token is the only key). */
export async function lookupInvitation(opts: { db: Db; token: string; now?: Date }) {
  const token = parseInput(zInvitationToken, opts.token);
  const inv = await opts.db.invitation.findUnique({ where: { tokenHash: tokenHashOf(token) }, select: { email: true, expiresAt: true, acceptedAt: true, revokedAt: true, createdBy: { select: { name: true } } } });
  if (!inv) throw new AppError("NOT_FOUND", "This invitation link is not valid. Check that it was copied whole, or ask an admin for a new one.", { reason: "no_such_invitation" });
  const state = stateOf(inv, opts.now ?? new Date());
  return { email: inv.email, expiresAt: inv.expiresAt, invitedBy: inv.createdBy?.name ?? null, state, refusal: state === "open" ? null : refusal[state] };
}

async function lockOpenInvitation(tx: Tx, where: { tokenHash: string } | { email: string }, now: Date) {
  const rows =
    "tokenHash" in where
      ? await tx.$queryRaw<{ id: string }[]>`SELECT "id" FROM "Invitation" WHERE "tokenHash" = ${where.tokenHash} FOR UPDATE`
      : await tx.$queryRaw<{ id: string }[]>`
          SELECT "id" FROM "Invitation" WHERE "email" = ${where.email} AND "acceptedAt" IS NULL AND "revokedAt" IS NULL AND "expiresAt" > ${now}
          ORDER BY "createdAt" DESC LIMIT 1 FOR UPDATE`;
  const id = rows[0]?.id;
  return id ? tx.invitation.findUniqueOrThrow({ where: { id } }) : null;
}

async function markAccepted(tx: Tx, inv: { id: string; email: string; isAdmin: boolean; roles: Prisma.JsonValue }, user: { id: string; email: string }, via: string, now: Date) {
  await tx.invitation.update({ where: { id: inv.id }, data: { acceptedAt: now, acceptedUserId: user.id } });
  const roles = await grantRoles(tx, user.id, zGrantedRoles.catch([] as GrantedRoles).parse(inv.roles));
  await recordAudit(tx, { actor: auditActorOf({ ...user, isAdmin: inv.isAdmin }), action: "user.invite.accept", objectType: "Invitation", objectId: inv.id, detail: { email: user.email, via, isAdmin: inv.isAdmin, roles } });
  return roles;
}

/** The person makes their password account from the link; returns the email to sign in with. */
export async function acceptInvitation(opts: { db: Db; input: unknown; now?: Date }) {
  const input = parseInput(zAcceptInvitationInput, opts.input);
  const now = opts.now ?? new Date();
  const passwordHash = await hashPassword(input.password);
  return transaction(opts.db, "acceptInvitation", async (tx) => {
    const inv = await lockOpenInvitation(tx, { tokenHash: tokenHashOf(input.token) }, now);
    if (!inv) throw new AppError("NOT_FOUND", "This invitation link is not valid. Ask an admin for a new one.", { reason: "no_such_invitation" });
    const state = stateOf(inv, now);
    if (state !== "open") throw new AppError("CONFLICT", refusal[state], { reason: `invitation_${state}` });
    const user = await insertPasswordUser(tx, { email: inv.email, name: input.name, passwordHash, isAdmin: inv.isAdmin, admittedVia: "invitation", now });
    await markAccepted(tx, inv, user, "password", now);
    return { email: user.email };
  });
}

/** Is there an open invitation for this email (GitHub sign-in's admission reads it)? */
export async function hasOpenInvitation(db: Db, email: string, now = new Date()) {
  return (await db.invitation.count({ where: { email: email.toLowerCase(), acceptedAt: null, revokedAt: null, expiresAt: { gt: now } } })) > 0;
}

/**
 * A user just created by GitHub sign-in: the open invitation for their email, if any, is used
 * (its roles given, marked accepted). Returns whether one was.
 */
export async function acceptInvitationOnSignUp(db: Db, user: { id: string; email: string }, now = new Date()): Promise<boolean> {
  return transaction(db, "acceptInvitationOnSignUp", async (tx) => {
    const inv = await lockOpenInvitation(tx, { email: user.email.toLowerCase() }, now);
    if (!inv) return false;
    await tx.user.update({ where: { id: user.id }, data: { isAdmin: inv.isAdmin, admittedVia: "invitation" } });
    await markAccepted(tx, inv, user, "github", now);
    return true;
  });
}
