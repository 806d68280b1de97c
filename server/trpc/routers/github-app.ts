import { z } from "zod";
import { getGithubAppSummary, removeGithubApp, saveExistingApp, startManifestFlow, zExistingAppInput, zStartManifestInput } from "@/server/domain/github-app/app-service";
import { APP_PERMISSIONS } from "@/server/domain/github-app/manifest";
import { sealingKey } from "@/server/domain/github-app/key";
import { env } from "@/server/env";
import { adminProcedure, router } from "../init";
import { zGithubAppSettings, zGithubAppSummary, zRemovedGithubApp, zStartedManifest } from "../outputs/github-app";

// Settings → GitHub (Airlock admins). No procedure returns a secret: the summary names the app,
// never its key or webhook secret.

const airlockUrl = () => env.AIRLOCK_URL ?? `http://127.0.0.1:${env.PORT}`;

export const githubAppRouter = router({
  get: adminProcedure.output(zGithubAppSettings).query(async ({ ctx }) => ({
    app: await getGithubAppSummary(ctx.db),
    permissions: Object.entries(APP_PERMISSIONS).map(([name, p]) => ({ name, level: p.level, why: p.why })),
    personalTokenConfigured: Boolean(env.GITHUB_TOKEN),
    envWebhookSecretConfigured: Boolean(env.GITHUB_WEBHOOK_SECRET),
    webhookUrl: `${airlockUrl()}/api/webhooks/github`,
  })),

  startManifest: adminProcedure
    .input(zStartManifestInput)
    .output(zStartedManifest)
    .mutation(async ({ ctx, input }) => {
      const started = await startManifestFlow({ db: ctx.db, actor: ctx.user, input, airlockUrl: airlockUrl(), githubUrl: env.GITHUB_URL });
      return { postUrl: started.postUrl, manifest: JSON.stringify(started.manifest) };
    }),

  saveExisting: adminProcedure.input(zExistingAppInput).output(zGithubAppSummary).mutation(({ ctx, input }) => saveExistingApp({ db: ctx.db, actor: ctx.user, input, key: sealingKey(), apiUrl: env.GITHUB_API_URL ?? null })),

  remove: adminProcedure.input(z.object({ confirm: z.literal(true) })).output(zRemovedGithubApp).mutation(async ({ ctx }) => {
    await removeGithubApp({ db: ctx.db, actor: ctx.user });
    return { removed: true };
  }),
});
