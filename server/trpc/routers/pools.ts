import { z } from "zod";
import {
  zConfigGrantInput,
  zRunnerPoolInput,
  zSecretGrantInput,
  zServiceAccountInput,
  zUpdateConfigGrantInput,
  zUpdateRunnerPoolInput,
  zUpdateSecretGrantInput,
  zUpdateServiceAccountInput,
  zVersionRefInput,
} from "@/server/domain/pools/forms/schemas";
import { createConfigGrant, createSecretGrant, deleteGrant, updateConfigGrant, updateSecretGrant } from "@/server/domain/pools/grants";
import { getPoolSettings } from "@/server/domain/pools/pools-presenter";
import {
  createRunnerPool,
  createServiceAccount,
  deleteRunnerPool,
  deleteServiceAccount,
  updateRunnerPool,
  updateServiceAccount,
} from "@/server/domain/pools/pools-service";
import { adminProcedure, memberProcedure, router } from "../init";
import { zDeleted } from "../outputs/shared";
import { zConfigGrant, zPoolSettings, zRunnerPool, zSecretGrant, zServiceAccount } from "../outputs/pools";

// Runner pools, service accounts and grants: everyone with a role reads them (names only); only an
// Airlock admin changes them. The services check again, and keep the trust rules.

export const poolsRouter = router({
  settings: memberProcedure.output(zPoolSettings).query(({ ctx }) => getPoolSettings({ db: ctx.db, actor: ctx.user })),

  createPool: adminProcedure.input(zRunnerPoolInput).output(zRunnerPool).mutation(({ ctx, input }) => createRunnerPool({ db: ctx.db, actor: ctx.user, input })),
  updatePool: adminProcedure.input(zUpdateRunnerPoolInput).output(zRunnerPool).mutation(({ ctx, input }) => updateRunnerPool({ db: ctx.db, actor: ctx.user, input })),
  deletePool: adminProcedure.input(zVersionRefInput).output(zDeleted).mutation(({ ctx, input }) => deleteRunnerPool({ db: ctx.db, actor: ctx.user, ...input })),

  createServiceAccount: adminProcedure
    .input(zServiceAccountInput)
    .output(zServiceAccount)
    .mutation(({ ctx, input }) => createServiceAccount({ db: ctx.db, actor: ctx.user, input })),
  updateServiceAccount: adminProcedure
    .input(zUpdateServiceAccountInput)
    .output(zServiceAccount)
    .mutation(({ ctx, input }) => updateServiceAccount({ db: ctx.db, actor: ctx.user, input })),
  deleteServiceAccount: adminProcedure.input(zVersionRefInput).output(zDeleted).mutation(({ ctx, input }) => deleteServiceAccount({ db: ctx.db, actor: ctx.user, ...input })),

  createSecretGrant: adminProcedure.input(zSecretGrantInput).output(zSecretGrant).mutation(({ ctx, input }) => createSecretGrant({ db: ctx.db, actor: ctx.user, input })),
  updateSecretGrant: adminProcedure.input(zUpdateSecretGrantInput).output(zSecretGrant).mutation(({ ctx, input }) => updateSecretGrant({ db: ctx.db, actor: ctx.user, input })),
  createConfigGrant: adminProcedure.input(zConfigGrantInput).output(zConfigGrant).mutation(({ ctx, input }) => createConfigGrant({ db: ctx.db, actor: ctx.user, input })),
  updateConfigGrant: adminProcedure.input(zUpdateConfigGrantInput).output(zConfigGrant).mutation(({ ctx, input }) => updateConfigGrant({ db: ctx.db, actor: ctx.user, input })),
  deleteGrant: adminProcedure
    .input(zVersionRefInput.extend({ kind: z.enum(["secret", "config"]) }))
    .output(zDeleted)
    .mutation(({ ctx, input }) => deleteGrant({ db: ctx.db, actor: ctx.user, ...input })),
});
