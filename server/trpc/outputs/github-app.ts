import { z } from "zod";

// What Settings → GitHub sends to the browser (server/domain/github-app/app-service.ts): the
// app's names and links, whether secrets are configured, never a key or a webhook secret.

export const zGithubAppSummary = z.discriminatedUnion("configured", [
  z.object({ configured: z.literal(false) }),
  z.object({
    configured: z.literal(true),
    appId: z.number().int(),
    slug: z.string(),
    name: z.string(),
    htmlUrl: z.string(),
    ownerLogin: z.string().nullable(),
    source: z.string(),
    installUrl: z.string(),
    createdAt: z.date(),
  }),
]);

export const zGithubAppSettings = z.object({
  app: zGithubAppSummary,
  permissions: z.array(z.object({ name: z.string(), level: z.string(), why: z.string() })),
  personalTokenConfigured: z.boolean(),
  envWebhookSecretConfigured: z.boolean(),
  webhookUrl: z.string(),
});
export const zStartedManifest = z.object({ postUrl: z.string(), manifest: z.string() });
export const zRemovedGithubApp = z.object({ removed: z.boolean() });
