import { z } from "zod";
import { createUserAccount, listUsers, setGlobalAdmin } from "@/server/domain/users/accounts";
import { acceptInvitation, createInvitation, listInvitations, lookupInvitation, revokeInvitation } from "@/server/domain/users/invitations";
import { zAcceptInvitationInput, zCreateUserInput, zInvitationInput, zInvitationToken, zSetAdminInput } from "@/server/domain/users/schemas";
import { zId } from "@/server/lib/ids";
import { adminProcedure, protectedProcedure, publicProcedure, router } from "../init";
import {
  zAcceptedInvitation,
  zCreatedInvitation,
  zCreatedUser,
  zInvitationList,
  zInvitationLookup,
  zMe,
  zRevokedInvitation,
  zUserAdmin,
  zUserList,
} from "../outputs/users";

// Accounts by invitation. Airlock admins list people, create accounts, give the global admin role
// and invite by a one-time link (repository roles are given here with the account, and changed on
// each repository's settings page). Anyone holding a link may look it up and accept it: the token
// is the only key (256 bits), and every mutation is rate limited per address.

export const usersRouter = router({
  /** Your own profile: all an account with no role may read. */
  me: protectedProcedure.output(zMe).query(async ({ ctx }) => {
    const roles = await ctx.db.membership.count({ where: { userId: ctx.user.id } });
    return { id: ctx.user.id, email: ctx.user.email, name: ctx.user.name, isAdmin: ctx.user.isAdmin, repositoryRoles: roles };
  }),

  list: adminProcedure.output(zUserList).query(({ ctx }) => listUsers({ db: ctx.db, actor: ctx.user })),

  create: adminProcedure
    .input(zCreateUserInput)
    .output(zCreatedUser)
    .mutation(({ ctx, input }) => createUserAccount({ db: ctx.db, actor: ctx.user, input, now: ctx.now() })),

  setAdmin: adminProcedure.input(zSetAdminInput).output(zUserAdmin).mutation(({ ctx, input }) => setGlobalAdmin({ db: ctx.db, actor: ctx.user, input })),

  invitations: adminProcedure.output(zInvitationList).query(({ ctx }) => listInvitations({ db: ctx.db, actor: ctx.user, now: ctx.now() })),

  invite: adminProcedure.input(zInvitationInput).output(zCreatedInvitation).mutation(({ ctx, input }) => createInvitation({ db: ctx.db, actor: ctx.user, input, now: ctx.now() })),

  revokeInvitation: adminProcedure
    .input(z.object({ invitationId: zId }))
    .output(zRevokedInvitation)
    .mutation(({ ctx, input }) => revokeInvitation({ db: ctx.db, actor: ctx.user, invitationId: input.invitationId, now: ctx.now() })),
});

export const invitationRouter = router({
  lookup: publicProcedure
    .input(z.object({ token: zInvitationToken }))
    .output(zInvitationLookup)
    .query(({ ctx, input }) => lookupInvitation({ db: ctx.db, token: input.token, now: ctx.now() })),

  accept: publicProcedure.input(zAcceptInvitationInput).output(zAcceptedInvitation).mutation(({ ctx, input }) => acceptInvitation({ db: ctx.db, input, now: ctx.now() })),
});
