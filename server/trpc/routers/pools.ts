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
import { poolSettings } from "@/server/domain/pools/pools-presenter";
import {
  createRunnerPool,
  createServiceAccount,
  deleteRunnerPool,
  deleteServiceAccount,
  updateRunnerPool,
  updateServiceAccount,
} from "@/server/domain/pools/pools-service";
import { adminProcedure, memberProcedure, router } from "../init";

// Runner pools, service accounts and grants: everyone with a role reads them (names only); only an
// Airlock admin changes them. The services check again, and keep the trust rules.

export const poolsRouter = router({
  settings: memberProcedure.query(({ ctx }) => poolSettings({ db: ctx.db, actor: ctx.user })),

  createPool: adminProcedure.input(zRunnerPoolInput).mutation(({ ctx, input }) => createRunnerPool({ db: ctx.db, actor: ctx.user, input })),
  updatePool: adminProcedure.input(zUpdateRunnerPoolInput).mutation(({ ctx, input }) => updateRunnerPool({ db: ctx.db, actor: ctx.user, input })),
  deletePool: adminProcedure.input(zVersionRefInput).mutation(({ ctx, input }) => deleteRunnerPool({ db: ctx.db, actor: ctx.user, ...input })),

  createServiceAccount: adminProcedure
    .input(zServiceAccountInput)
    .mutation(({ ctx, input }) => createServiceAccount({ db: ctx.db, actor: ctx.user, input })),
  updateServiceAccount: adminProcedure
    .input(zUpdateServiceAccountInput)
    .mutation(({ ctx, input }) => updateServiceAccount({ db: ctx.db, actor: ctx.user, input })),
  deleteServiceAccount: adminProcedure.input(zVersionRefInput).mutation(({ ctx, input }) => deleteServiceAccount({ db: ctx.db, actor: ctx.user, ...input })),

  createSecretGrant: adminProcedure.input(zSecretGrantInput).mutation(({ ctx, input }) => createSecretGrant({ db: ctx.db, actor: ctx.user, input })),
  updateSecretGrant: adminProcedure.input(zUpdateSecretGrantInput).mutation(({ ctx, input }) => updateSecretGrant({ db: ctx.db, actor: ctx.user, input })),
  createConfigGrant: adminProcedure.input(zConfigGrantInput).mutation(({ ctx, input }) => createConfigGrant({ db: ctx.db, actor: ctx.user, input })),
  updateConfigGrant: adminProcedure.input(zUpdateConfigGrantInput).mutation(({ ctx, input }) => updateConfigGrant({ db: ctx.db, actor: ctx.user, input })),
  deleteGrant: adminProcedure
    .input(zVersionRefInput.extend({ kind: z.enum(["secret", "config"]) }))
    .mutation(({ ctx, input }) => deleteGrant({ db: ctx.db, actor: ctx.user, ...input })),
});
