import type { Db, RepoRole } from "@/server/db";
import { AppError } from "@/server/errors";
import { recordAudit } from "../audit";
import { requireRepositoryRoleOf } from "../access";
import { auditActorOf, type UserActor } from "../actor";
import { fieldError, parseInput } from "../input";
import { refusableTransaction, type Refuse } from "../refusable";
import { lockRows } from "../versioned";
import { zAddMemberInput, zChangeMemberInput, zRemoveMemberInput } from "./schemas";

// A repository's members and their roles, changed by its admins. A change names the role the form
// showed: if someone changed that member since, the change is refused with their current role.
// The repository keeps at least one admin: the last one can be neither removed nor demoted.
// (Changes serialise on the repository row, so two admins cannot demote each other at once.)

async function membership(db: Db, repositoryId: string, userId: string, refuse: Refuse) {
  const m = await db.membership.findUnique({
    where: { userId_repositoryId: { userId, repositoryId } },
    select: { id: true, role: true, user: { select: { email: true } } },
  });
  return m ?? refuse(new AppError("NOT_FOUND", "That person is not a member of this repository.", { reason: "no_such_member" }));
}

function refuseIfChanged(current: RepoRole, expected: RepoRole, email: string, refuse: Refuse) {
  if (current !== expected) {
    refuse(
      new AppError("CONFLICT", `${email} is now ${current} (someone changed it since you loaded the page): nothing was changed.`, {
        reason: "stale_member",
        details: { expectedRole: expected, currentRole: current, theirChange: { changes: [{ path: email, kind: "changed", before: expected, after: current }] } },
      }),
    );
  }
}

async function refuseLastAdmin(db: Db, repositoryId: string, email: string, refuse: Refuse) {
  const admins = await db.membership.count({ where: { repositoryId, role: "admin" } });
  if (admins <= 1) {
    refuse(new AppError("CONFLICT", `${email} is the repository's last admin: make someone else admin first.`, { reason: "last_admin" }));
  }
}

export async function addMember(opts: { db: Db; actor: UserActor; input: unknown }) {
  const input = parseInput(zAddMemberInput, opts.input);
  return refusableTransaction(opts.db, "addMember", async (tx, refuse) => {
    await requireRepositoryRoleOf(tx, opts.actor, input.repositoryId, "admin", "change the repository's members");
    await lockRows(tx, "Repository", [input.repositoryId]);
    const user =
      (await tx.user.findUnique({ where: { email: input.email }, select: { id: true, email: true } })) ??
      refuse(fieldError("UNPROCESSABLE", "email", `No Airlock account has the email ${input.email}: invite them from Settings → Users first.`, "no_such_user"));
    const existing = await tx.membership.findUnique({ where: { userId_repositoryId: { userId: user.id, repositoryId: input.repositoryId } } });
    if (existing) refuse(fieldError("CONFLICT", "email", `${user.email} is already ${existing.role} here: change their role in the list.`, "already_member"));
    const created = await tx.membership.create({ data: { userId: user.id, repositoryId: input.repositoryId, role: input.role } });
    await recordAudit(tx, {
      actor: auditActorOf(opts.actor),
      action: "repository.member.add",
      objectType: "Membership",
      objectId: created.id,
      repositoryId: input.repositoryId,
      detail: { email: user.email, role: input.role },
    });
    return created;
  });
}

export async function changeMemberRole(opts: { db: Db; actor: UserActor; input: unknown }) {
  const input = parseInput(zChangeMemberInput, opts.input);
  return refusableTransaction(opts.db, "changeMemberRole", async (tx, refuse) => {
    await requireRepositoryRoleOf(tx, opts.actor, input.repositoryId, "admin", "change the repository's members");
    await lockRows(tx, "Repository", [input.repositoryId]);
    const m = await membership(tx, input.repositoryId, input.userId, refuse);
    refuseIfChanged(m.role, input.expectedRole, m.user.email, refuse);
    if (m.role === input.role) refuse(new AppError("BAD_REQUEST", `${m.user.email} is already ${m.role}.`, { reason: "unchanged" }));
    if (m.role === "admin") await refuseLastAdmin(tx, input.repositoryId, m.user.email, refuse);
    const updated = await tx.membership.update({ where: { id: m.id }, data: { role: input.role } });
    await recordAudit(tx, {
      actor: auditActorOf(opts.actor),
      action: "repository.member.role",
      objectType: "Membership",
      objectId: m.id,
      repositoryId: input.repositoryId,
      detail: { email: m.user.email, from: m.role, to: input.role },
    });
    return updated;
  });
}

export async function removeMember(opts: { db: Db; actor: UserActor; input: unknown }) {
  const input = parseInput(zRemoveMemberInput, opts.input);
  return refusableTransaction(opts.db, "removeMember", async (tx, refuse) => {
    await requireRepositoryRoleOf(tx, opts.actor, input.repositoryId, "admin", "change the repository's members");
    await lockRows(tx, "Repository", [input.repositoryId]);
    const m = await membership(tx, input.repositoryId, input.userId, refuse);
    refuseIfChanged(m.role, input.expectedRole, m.user.email, refuse);
    if (m.role === "admin") await refuseLastAdmin(tx, input.repositoryId, m.user.email, refuse);
    await tx.membership.delete({ where: { id: m.id } });
    await recordAudit(tx, {
      actor: auditActorOf(opts.actor),
      action: "repository.member.remove",
      objectType: "Membership",
      objectId: m.id,
      repositoryId: input.repositoryId,
      detail: { email: m.user.email, role: m.role },
    });
    return { userId: input.userId };
  });
}
