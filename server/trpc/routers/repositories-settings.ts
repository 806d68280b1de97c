import { addMember, changeMemberRole, removeMember } from "@/server/domain/repositories/members-service";
import {
  zAddMemberInput,
  zChangeMemberInput,
  zRemoveMemberInput,
  zRunCheckInput,
  zSetRepositoryEnabledInput,
  zUpdateRepositoryPolicyInput,
} from "@/server/domain/repositories/schemas";
import { setRepositoryEnabled } from "@/server/domain/repositories/manage-service";
import { removeRepository, updateRepositoryDetails } from "@/server/domain/repositories/edit-service";
import { requestCheckRun } from "@/server/domain/repositories/run-check";
import { repositorySettings, settingsRepositories } from "@/server/domain/repositories/settings-presenter";
import { updateRepositoryPolicy } from "@/server/domain/repositories/settings-service";
import { createLocalRepository, installationCandidates, registerFromInstallation, registerGithubRepository } from "@/server/domain/repositories/add-service";
import {
  zCreateLocalRepositoryInput,
  zRegisterFromInstallationInput,
  zRegisterGithubRepositoryInput,
  zRemoveRepositoryInput,
  zUpdateRepositoryDetailsInput,
} from "@/server/domain/repositories/schemas";
import { sealingKey } from "@/server/domain/github-app/key";
import { env } from "@/server/env";
import { resolve } from "node:path";
import { z } from "zod";
import { ForgeKind, TrustTier, Visibility } from "@/server/db/generated/enums";
import { adminProcedure, protectedProcedure, repositoryProcedure, router } from "../init";
import { zInstallationCandidates, zMembership, zRemovedMember, zRepositoryPolicySaved, zRepositorySettings, zSettingsRepositories } from "../outputs/repositories";

// A repository's settings: its viewers read them; its admins (or an Airlock admin) change the
// policy and the members. The services check the role again inside their transactions.

const zAdded = z.object({ id: z.string(), fullName: z.string(), forge: z.enum(ForgeKind), created: z.boolean() });

export const repositorySettingsRouter = router({
  list: protectedProcedure.output(zSettingsRepositories).query(({ ctx }) => settingsRepositories({ db: ctx.db, actor: ctx.user })),

  /** An Airlock admin registers a GitHub repository by name or URL. */
  register: adminProcedure
    .input(zRegisterGithubRepositoryInput)
    .output(zAdded)
    .mutation(({ ctx, input }) => registerGithubRepository({ db: ctx.db, actor: ctx.user, input, githubUrl: env.GITHUB_URL })),

  /** An Airlock admin creates a repository of the local forge (a bare git repository with a first commit). */
  createLocal: adminProcedure
    .input(zCreateLocalRepositoryInput)
    .output(zAdded)
    .mutation(({ ctx, input }) => createLocalRepository({ db: ctx.db, actor: ctx.user, input, dataDir: resolve(env.AIRLOCK_DATA_DIR) })),

  /** The GitHub App's installations and their repositories (Airlock admins), for "Add repository". */
  installationCandidates: adminProcedure.output(zInstallationCandidates).query(({ ctx }) => installationCandidates({ db: ctx.db, actor: ctx.user, key: sealingKey(), apiUrl: env.GITHUB_API_URL ?? null })),

  /** An Airlock admin adds one repository of an installation (GitHub is asked again that it covers it). */
  registerFromInstallation: adminProcedure
    .input(zRegisterFromInstallationInput)
    .output(zAdded)
    .mutation(({ ctx, input }) =>
      registerFromInstallation({ db: ctx.db, actor: ctx.user, input, key: sealingKey(), githubUrl: env.GITHUB_URL, apiUrl: env.GITHUB_API_URL ?? null }),
    ),

  get: repositoryProcedure("viewer").output(zRepositorySettings).query(({ ctx }) => repositorySettings({ db: ctx.db, actor: ctx.user, repositoryId: ctx.repositoryId, dataDir: resolve(env.AIRLOCK_DATA_DIR) })),

  updatePolicy: repositoryProcedure("admin")
    .input(zUpdateRepositoryPolicyInput)
    .output(zRepositoryPolicySaved)
    .mutation(({ ctx, input }) => updateRepositoryPolicy({ db: ctx.db, actor: ctx.user, input })),

  addMember: repositoryProcedure("admin").input(zAddMemberInput).output(zMembership).mutation(({ ctx, input }) => addMember({ db: ctx.db, actor: ctx.user, input })),

  changeMemberRole: repositoryProcedure("admin")
    .input(zChangeMemberInput)
    .output(zMembership)
    .mutation(({ ctx, input }) => changeMemberRole({ db: ctx.db, actor: ctx.user, input })),

  removeMember: repositoryProcedure("admin")
    .input(zRemoveMemberInput)
    .output(zRemovedMember)
    .mutation(({ ctx, input }) => removeMember({ db: ctx.db, actor: ctx.user, input })),

  /** Its admins disable (with a reason) or enable it; a disabled repository dispatches nothing. */
  setEnabled: repositoryProcedure("admin")
    .input(zSetRepositoryEnabledInput)
    .output(z.object({ id: z.string(), fullName: z.string(), disabled: z.boolean(), changed: z.boolean() }))
    .mutation(({ ctx, input }) => setRepositoryEnabled({ db: ctx.db, actor: ctx.user, input, now: ctx.now() })),

  /** Its admins change the default branch; Airlock admins also the check command, trust tier and visibility. */
  updateDetails: repositoryProcedure("admin")
    .input(zUpdateRepositoryDetailsInput)
    .output(
      z.object({
        id: z.string(),
        version: z.number(),
        defaultBranch: z.string(),
        checkCommand: z.string().nullable(),
        trustTier: z.enum(TrustTier),
        visibility: z.enum(Visibility),
      }),
    )
    .mutation(({ ctx, input }) => updateRepositoryDetails({ db: ctx.db, actor: ctx.user, input, dataDir: resolve(env.AIRLOCK_DATA_DIR) })),

  /** An Airlock admin removes it: refused while runs or approvals are live; history kept (edit-service.ts). */
  remove: adminProcedure
    .input(zRemoveRepositoryInput)
    .output(z.object({ id: z.string(), fullName: z.string(), removed: z.boolean(), changed: z.boolean() }))
    .mutation(({ ctx, input }) => removeRepository({ db: ctx.db, actor: ctx.user, input, dataDir: resolve(env.AIRLOCK_DATA_DIR), now: ctx.now() })),

  /** The local CI runs the repository's check (maintainers); a failure fires the trigger rules. */
  runCheck: repositoryProcedure("maintainer")
    .input(zRunCheckInput)
    .output(z.object({ repositoryId: z.string(), branch: z.string(), queued: z.boolean() }))
    .mutation(({ ctx, input }) =>
      requestCheckRun({ db: ctx.db, actor: ctx.user, repositoryId: ctx.repositoryId, input: { requestId: input.requestId, branch: input.branch } }),
    ),
});
