import { z } from "zod";
import { ForgeKind, RepoRole, TrustTier, Visibility, WriteBackKind } from "@/server/db/generated/enums";
import { zRepositoryPolicyInput } from "@/server/domain/repositories/schemas";
import { zRight } from "./shared";

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

/** One repository's settings page (server/domain/repositories/settings-presenter.ts). */
export const zRepositorySettings = zRepositoryRef.extend({
  forge: z.enum(ForgeKind),
  defaultBranch: z.string(),
  checkCommand: z.string().nullable(),
  runCheck: zRight,
  trustTier: z.enum(TrustTier),
  visibility: z.enum(Visibility),
  disabled: z.object({ at: z.date(), reason: z.string().nullable(), by: z.string().nullable() }).nullable(),
  isAirlockAdmin: z.boolean(),
  removal: z.object({
    gitData: z.string().nullable(),
    runs: z.number().int(),
    openRuns: z.number().int(),
    approvals: z.number().int(),
    liveApprovals: z.number().int(),
    memberships: z.number().int(),
  }),
  version: z.number().int(),
  policy: zRepositoryPolicyInput,
  members: z.array(z.object({ id: z.string(), name: z.string(), email: z.string(), isAdmin: z.boolean(), role: z.enum(RepoRole), since: z.date() })),
  adminCount: z.number().int(),
  role: z.enum(RepoRole).nullable(),
  canEdit: zRight,
});

/** A saved policy, with the version the form guards its next save with. */
export const zRepositoryPolicySaved = zRepositoryRef.extend({ version: z.number().int(), ...zRepositoryPolicyInput.shape });

/** The GitHub App's installations and their repositories, each with the Airlock repository it is (null: not registered). */
export const zInstallationCandidates = z.discriminatedUnion("configured", [
  z.object({ configured: z.literal(false) }),
  z.object({
    configured: z.literal(true),
    error: z.string().nullable(),
    installations: z.array(
      z.object({
        id: z.number().int(),
        account: z.string().nullable(),
        suspended: z.boolean(),
        error: z.string().nullable(),
        repositories: z.array(
          z.object({ id: z.number().int(), fullName: z.string(), visibility: z.enum(Visibility), defaultBranch: z.string(), registeredId: z.string().nullable() }),
        ),
      }),
    ),
  }),
]);
