// No secret survives ingest: secrets seeded into a failing log, a PR body, a comment and a step
// name go through the webhook route, local CI ingest and evaluation; then every text and JSON
// column of every table in the database is searched for each secret value.
import { beforeAll, describe, expect, it } from "vitest";

const WEBHOOK_SECRET = "whsec-route-Zq8v1TnR4kLp0xYc";
process.env.GITHUB_WEBHOOK_SECRET = WEBHOOK_SECRET;
const NPM_TOKEN = "npm-live-7f3c9a1e5b2d4f6a8c0e";
// Granted secret values come from the server environment (see server/env.ts grantedValue).
process.env.AIRLOCK_SECRET_NPM_TOKEN = NPM_TOKEN;

const { getDb } = await import("@/server/db");
const { createRepository } = await import("@/server/testing/factories");
const { createRule, createStack, sha } = await import("./fixtures/world");
const { failedWorkflowJob, prComment, pullRequestEvent } = await import("./fixtures/deliveries");
const { LOGS, localFailedCheck } = await import("./fixtures/local-events");
const { deliver } = await import("@/server/domain/evaluation/fixtures/harness");
const { ingestCiEvent } = await import("./delivery/ingest-ci-event");
const { evaluateDelivery } = await import("@/server/domain/evaluation/evaluate");
const { forgetKnownSecrets } = await import("./known-secrets");

const PEM_BODY = "MIIEpAIBAAKCAQEA3Tz2mr7SZiAMfQyuvBjM9OiJjRazXBZ1BjP5CE/Wm/Rr500P";
const SECRETS = {
  githubToken: `ghp_${"R4nd0mT0k3nV4lu3xYz9".repeat(2).slice(0, 36)}`,
  awsKeyId: "AKIAQ3EGRUZ7XK2VWJ4P",
  awsSecret: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzEXAMPLEKY",
  slack: "xoxb-2048-4096-sLaCkT0k3nV4lu3",
  jwt: "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhaXJsb2NrLXRlc3QifQ.c2lnbmF0dXJlLXZhbHVl",
  password: "hunter2-correct-horse",
  urlPassword: "s3cr3t-pass-w0rd",
  bearer: "b34r3r.t0k3n.v4lu3-9f8e7d",
  pem: PEM_BODY,
  npm: NPM_TOKEN,
  npmUrlEncoded: encodeURIComponent(`${NPM_TOKEN}/`).slice(0, -3),
  npmBase64: Buffer.from(NPM_TOKEN).toString("base64"),
  webhookSecret: WEBHOOK_SECRET,
};

const leakyText = [
  `export GITHUB_TOKEN=${SECRETS.githubToken}`,
  `aws_access_key_id = ${SECRETS.awsKeyId}`,
  `aws_secret_access_key = ${SECRETS.awsSecret}`,
  `posting to slack with ${SECRETS.slack}`,
  `Authorization: Bearer ${SECRETS.bearer}`,
  `session ${SECRETS.jwt}`,
  `DB_PASSWORD=${SECRETS.password}`,
  `git clone https://deploy:${SECRETS.urlPassword}@git.example.com/acme/app.git`,
  "-----BEGIN RSA PRIVATE KEY-----",
  PEM_BODY,
  "-----END RSA PRIVATE KEY-----",
  `npm config set //registry.npmjs.org/:_authToken ${NPM_TOKEN}`,
  `echo ${SECRETS.npmBase64} | base64 -d`,
  `curl https://registry.example.com/?t=${encodeURIComponent(NPM_TOKEN)}`,
  `webhook secret was ${WEBHOOK_SECRET}`,
].join("\n");

const db = getDb();
let repo: Awaited<ReturnType<typeof createRepository>>;

beforeAll(async () => {
  repo = await createRepository();
  const stack = await createStack(db);
  await db.secretGrant.create({ data: { secretName: "NPM_TOKEN", stackId: stack.id } });
  forgetKnownSecrets();
  for (const kind of ["failed_check", "pr_comment"] as const) await createRule(db, { kind, stackId: stack.id, repositoryId: repo.id });
});

/** Every text-like column of every table (public and the queue), like a pg_dump would see it. */
async function findInDatabase(needle: string): Promise<string[]> {
  const columns = await db.$queryRaw<{ table_schema: string; table_name: string; column_name: string }[]>`
    SELECT c.table_schema, c.table_name, c.column_name
    FROM information_schema.columns c JOIN information_schema.tables t ON t.table_schema = c.table_schema AND t.table_name = c.table_name
    WHERE c.table_schema IN ('public', 'graphile_worker') AND t.table_type = 'BASE TABLE'
      AND (c.data_type IN ('text', 'character varying', 'json', 'jsonb', 'ARRAY', 'USER-DEFINED'))`;
  expect(columns.length).toBeGreaterThan(50);
  const hits: string[] = [];
  for (const c of columns) {
    const rows = await db.$queryRawUnsafe<{ n: number }[]>(
      `SELECT count(*)::int AS n FROM "${c.table_schema}"."${c.table_name}" WHERE strpos("${c.column_name}"::text, $1) > 0`,
      needle,
    );
    if ((rows[0]?.n ?? 0) > 0) hits.push(`${c.table_schema}.${c.table_name}.${c.column_name}`);
  }
  return hits;
}

describe("redaction at ingest", () => {
  it("stores no secret anywhere after ingest and evaluation, and reports what it redacted", async () => {
    const headSha = sha("leaky");
    // A PR whose body leaks everything, opened through the webhook.
    await deliver(db, pullRequestEvent({ repo: repo.fullName, action: "opened", number: 9, title: `Fix ${SECRETS.githubToken}`, body: leakyText, headRef: "feature/leak", headSha }));
    // Local CI fails with a log that echoes every secret.
    const local = await ingestCiEvent({
      db,
      event: localFailedCheck({ repo: repo.fullName, headSha, headBranch: "feature/leak", runId: "ci-leak", pr: { number: 9, headRef: "feature/leak" } }),
      log: `${LOGS.vitestA}\n${leakyText}`,
    });
    const failed = await evaluateDelivery({ db, deliveryId: local.deliveryId });
    // A GitHub job whose step name carries a token, and a comment that quotes secrets.
    const job = await deliver(db, failedWorkflowJob({ repo: repo.fullName, runId: 901, jobId: 9011, jobName: "deploy", step: `push with ${SECRETS.githubToken}`, headSha, headBranch: "feature/leak" }));
    const comment = await deliver(db, prComment({ repo: repo.fullName, number: 9, body: `@agent diagnose\n${leakyText}`, login: "octocat", association: "OWNER" }));

    const runIds = [failed, job, comment].flatMap((r) => r.created.map((c) => c.runId));
    expect(runIds).toHaveLength(3);
    for (const [name, value] of Object.entries(SECRETS)) {
      expect(await findInDatabase(value), `${name} leaked`).toEqual([]);
    }

    const run = await db.agentDispatchRun.findUniqueOrThrow({ where: { id: failed.created[0]!.runId } });
    const bundle = run.contextBundle as { logs: { excerpt: string; redaction: { status: string; entries: { kind: string; name: string | null }[] } }[] };
    const log = bundle.logs[0]!;
    expect(log.redaction.status).toBe("redacted");
    expect(log.redaction.entries.map((e) => e.kind)).toEqual(expect.arrayContaining(["github_token", "aws_access_key_id", "jwt", "private_key", "known_secret"]));
    expect(log.redaction.entries.filter((e) => e.kind === "known_secret").map((e) => e.name).sort()).toEqual(["GITHUB_WEBHOOK_SECRET", "NPM_TOKEN"]);
    expect(log.excerpt).toContain("[REDACTED:known_secret:NPM_TOKEN]");
    expect(run.prompt).toContain("[REDACTED:");
    const jobRow = await db.job.findFirstOrThrow({ where: { pipeline: { repositoryId: repo.id, externalId: "ci-leak" } } });
    expect(jobRow.logExcerpt).toContain("[REDACTED:github_token]");
    const pr = await db.pullRequest.findUniqueOrThrow({ where: { repositoryId_number: { repositoryId: repo.id, number: 9 } } });
    expect(pr.body).toContain("[REDACTED:secret_assignment]");
  });
});
