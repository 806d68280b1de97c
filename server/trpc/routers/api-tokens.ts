import { zApiTokenIdInput, zCreateApiTokenInput } from "@/server/domain/api-tokens/schemas";
import { createApiToken, listApiTokens, revokeApiToken } from "@/server/domain/api-tokens/tokens";
import { protectedProcedure, router } from "../init";
import { zApiTokenList, zCreatedApiToken, zRevokedApiToken } from "../outputs/api-tokens";

// The settings page's API tokens: everyone signed in manages their own (the domain caps each
// token at its owner's role); an Airlock admin also sees and revokes service tokens.

export const apiTokensRouter = router({
  list: protectedProcedure.output(zApiTokenList).query(({ ctx }) => listApiTokens({ db: ctx.db, owner: ctx.user })),

  create: protectedProcedure.input(zCreateApiTokenInput).output(zCreatedApiToken).mutation(({ ctx, input }) => createApiToken({ db: ctx.db, owner: ctx.user, input, now: ctx.now() })),

  revoke: protectedProcedure.input(zApiTokenIdInput).output(zRevokedApiToken).mutation(({ ctx, input }) => revokeApiToken({ db: ctx.db, actor: ctx.user, tokenId: input.tokenId, now: ctx.now() })),
});
