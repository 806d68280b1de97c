import { z } from "zod";
import { ForgeKind, RepoRole, TrustTier, Visibility, WriteBackKind } from "@/server/db/generated/enums";

// What the repository pickers and the members section read (server/domain/repositories/).

export const zRepositoryRef = z.object({ id: z.string(), fullName: z.string() });

export const zPickableRepositories = z.array(zRepositoryRef.extend({ forge: z.enum(ForgeKind), role: z.enum(RepoRole) }));

export const zSettingsRepositories = z.array(
  zRepositoryRef.extend({
    forge: z.enum(ForgeKind),
    visibility: z.enum(Visibility),
    trustTier: z.enum(TrustTier),
    defaultBranch: z.string(),
    disabledAt: z.date().nullable(),
    disabledReason: z.string().nullable(),
    disabledBy: z.string().nullable(),
    autoRunOnFailedCheck: z.boolean(),
    botCommentsAllowed: z.boolean(),
    writeBackExceptions: z.array(z.enum(WriteBackKind)),
    _count: z.object({ memberships: z.number().int(), triggerRules: z.number().int() }),
    role: z.enum(RepoRole).nullable(),
    lastDelivery: z.object({ deliveryId: z.string(), event: z.string(), outcome: z.string(), receivedAt: z.date() }).nullable(),
  }),
);

export const zMembership = z.object({ id: z.string(), repositoryId: z.string(), userId: z.string(), role: z.enum(RepoRole), createdAt: z.date() });
export const zRemovedMember = z.object({ userId: z.string() });
