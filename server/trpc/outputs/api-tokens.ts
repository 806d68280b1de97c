import { z } from "zod";
import { zTokenRole } from "@/server/domain/api-tokens/schemas";

// What the API-token procedures send to the browser (server/domain/api-tokens/tokens.ts):
// the token's public fields, never its hash. The token itself leaves the server once, in
// `create`'s answer.

const zApiTokenFields = z.object({
  id: z.string(),
  name: z.string(),
  kind: z.string(),
  role: zTokenRole,
  repositoryIds: z.array(z.string()),
  prefix: z.string(),
  createdAt: z.date(),
  expiresAt: z.date().nullable(),
  lastUsedAt: z.date().nullable(),
  revokedAt: z.date().nullable(),
});

export const zApiTokenList = z.array(
  zApiTokenFields.extend({
    owner: z.object({ id: z.string(), email: z.string() }),
    repositories: z.array(z.object({ id: z.string(), fullName: z.string().nullable() })),
  }),
);
export const zCreatedApiToken = zApiTokenFields.extend({ token: z.string() });
export const zRevokedApiToken = zApiTokenFields;
