import { z } from "zod";
import { RepoRole } from "@/server/db/generated/enums";

// What the accounts and invitation procedures send to the browser (server/domain/users/):
// names, roles and states, never a password hash, a session or an invitation's token hash. An
// invitation's link (with its token) leaves the server once, in `invite`'s answer.

const zInvitationState = z.enum(["open", "accepted", "revoked", "expired"]);

export const zMe = z.object({ id: z.string(), email: z.string(), name: z.string(), isAdmin: z.boolean(), repositoryRoles: z.number().int() });

export const zUserList = z.array(
  z.object({
    id: z.string(),
    email: z.string(),
    name: z.string(),
    isAdmin: z.boolean(),
    admittedVia: z.string().nullable(),
    createdAt: z.date(),
    signIn: z.array(z.string()),
    roles: z.array(z.object({ repositoryId: z.string(), fullName: z.string(), role: z.enum(RepoRole) })),
  }),
);
export const zCreatedUser = z.object({ id: z.string(), email: z.string(), name: z.string(), isAdmin: z.boolean() });
export const zUserAdmin = z.object({ id: z.string(), email: z.string(), isAdmin: z.boolean() });

export const zInvitationList = z.array(
  z.object({
    id: z.string(),
    email: z.string(),
    isAdmin: z.boolean(),
    roles: z.array(z.object({ repositoryId: z.string(), role: z.enum(RepoRole) })),
    createdAt: z.date(),
    expiresAt: z.date(),
    acceptedAt: z.date().nullable(),
    revokedAt: z.date().nullable(),
    invitedBy: z.string().nullable(),
    state: zInvitationState,
  }),
);
export const zCreatedInvitation = z.object({ id: z.string(), email: z.string(), expiresAt: z.date(), path: z.string() });
export const zRevokedInvitation = z.object({ id: z.string(), state: z.literal("revoked") });
export const zInvitationLookup = z.object({ email: z.string(), expiresAt: z.date(), invitedBy: z.string().nullable(), state: zInvitationState, refusal: z.string().nullable() });
export const zAcceptedInvitation = z.object({ email: z.string() });
