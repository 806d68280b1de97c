// GitHub for a loop spec's server (e2e/loop/serve.mjs starts it before the web server and the
// worker, and points GITHUB_API_URL and GITHUB_LOG_HOSTS at it): the GitHub API test double
// (server/forges/github/testing/fake-github.ts, which follows GitHub's REST protocol: app JWTs,
// installation tokens, check runs, the job-logs redirect to a separate storage host, collaborator
// permissions) with one GitHub App created on it. What a spec needs to play GitHub's part (create
// a repository and install the app on it, set a job's log or a person's role, read the check runs
// Airlock wrote) is a small JSON API on another loopback port; the app's id, key and webhook
// secret, and both addresses, are written to the file named by the first argument.
//
// Usage: node --import tsx e2e/loop/github-double.ts <info.json>
import { writeFileSync } from "node:fs";
import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import { z } from "zod";
import { startFakeGithub } from "@/server/forges/github/testing/fake-github";

export type GithubDoubleInfo = { apiUrl: string; blobUrl: string; controlUrl: string; app: { id: number; slug: string; pem: string; webhookSecret: string } };

const infoPath = process.argv[2];
if (!infoPath) throw new Error("usage: node --import tsx e2e/loop/github-double.ts <info.json>");

const fake = await startFakeGithub();
const app = fake.apps.createApp({ name: "Airlock e2e", owner: "acme" });

const zRepository = z.object({ fullName: z.string().regex(/^[\w.-]+\/[\w.-]+$/), branch: z.string().max(100).default("main") });
const zJobLog = z.object({ fullName: z.string().max(200), jobId: z.number().int().positive(), log: z.string().max(1_000_000) });
const zCollaborator = z.object({ fullName: z.string().max(200), login: z.string().max(100), role: z.enum(["admin", "maintain", "write", "triage", "read"]) });

async function json(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return JSON.parse(Buffer.concat(chunks).toString("utf8") || "{}");
}

const control = createServer((req, res) => {
  void (async () => {
    const url = new URL(req.url ?? "/", "http://control.invalid");
    const reply = (status: number, body: unknown) => {
      res.writeHead(status, { "content-type": "application/json" });
      res.end(JSON.stringify(body));
    };
    try {
      if (req.method === "POST" && url.pathname === "/repository") {
        const input = zRepository.parse(await json(req));
        const { headSha } = fake.createRepository(input.fullName, { branch: input.branch, files: { "README.md": "hello\n" } });
        const installation = fake.apps.install({ appId: app.id, account: input.fullName.split("/")[0] as string, repositories: [input.fullName] });
        return reply(200, { headSha, installationId: installation.id });
      }
      if (req.method === "POST" && url.pathname === "/job-log") {
        const input = zJobLog.parse(await json(req));
        fake.setJobLog(input.fullName, input.jobId, input.log);
        return reply(200, {});
      }
      if (req.method === "POST" && url.pathname === "/collaborator") {
        const input = zCollaborator.parse(await json(req));
        fake.setCollaborator(input.fullName, input.login, input.role);
        return reply(200, {});
      }
      if (req.method === "GET" && url.pathname === "/check-runs") {
        const fullName = url.searchParams.get("repository") ?? "";
        return reply(200, fake.checks.all(fullName).map((c) => ({ id: c.id, externalId: c.externalId, status: c.status, conclusion: c.conclusion, actions: c.actions, history: c.history, json: fake.checks.json(c.id) })));
      }
      if (req.method === "GET" && url.pathname === "/downloads") return reply(200, fake.downloads.map((d) => ({ path: d.path, authorization: d.authorization ?? null })));
      reply(404, { message: "no such control" });
    } catch (err) {
      reply(400, { message: String(err) });
    }
  })();
});
await new Promise<void>((done) => control.listen(0, "127.0.0.1", done));

const info: GithubDoubleInfo = {
  apiUrl: fake.url,
  blobUrl: fake.blobUrl,
  controlUrl: `http://127.0.0.1:${(control.address() as AddressInfo).port}`,
  app: { id: app.id, slug: app.slug, pem: app.pem, webhookSecret: app.webhookSecret },
};
writeFileSync(infoPath, JSON.stringify(info));
console.log(`[github-double] API ${info.apiUrl}, log storage ${info.blobUrl}, control ${info.controlUrl}`);

for (const sig of ["SIGINT", "SIGTERM"] as const) {
  process.on(sig, () => {
    control.close();
    void fake.close().finally(() => process.exit(0));
  });
}
