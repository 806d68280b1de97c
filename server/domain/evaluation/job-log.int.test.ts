// A GitHub failure's log, read through the GitHub API test double as GitHub serves it: the job
// logs API answers 302 to a signed download URL, fetched without Airlock's token. Bounded
// (the end kept behind a marker, a download cap, a time limit), redacted by the function that
// redacts local CI logs, and the facts triage decides on; an expired log and missing
// credentials are said, not silent.
import { afterAll, beforeAll, describe, expect, it } from "vitest";

process.env.GITHUB_WEBHOOK_SECRET = "webhook-secret-for-job-log-tests";

const { getDb } = await import("@/server/db");
const { createRepository } = await import("@/server/testing/factories");
const { createRule, createStack, sha } = await import("@/server/domain/ingest/fixtures/world");
const { failedWorkflowJob } = await import("@/server/domain/ingest/fixtures/deliveries");
const { LOGS } = await import("@/server/domain/ingest/fixtures/local-events");
const { post } = await import("@/server/domain/evaluation/fixtures/harness");
const { evaluateDelivery } = await import("./evaluate");
const { githubJobLogs } = await import("./job-log");
const { startFakeGithub } = await import("@/server/forges/github/testing/fake-github");
const { fetchJobLog } = await import("@/server/forges/github/job-logs");
const { githubClient } = await import("@/server/forges/github/client");
const { parseLogHosts } = await import("@/server/forges/github/log-hosts");
const { createServer } = await import("node:http");

type Fake = Awaited<ReturnType<typeof startFakeGithub>>;
const db = getDb();
let fake: Fake;
let stackId = "";
let app: ReturnType<Fake["apps"]["createApp"]>;
let n = 0;

beforeAll(async () => {
  fake = await startFakeGithub();
  app = fake.apps.createApp({ name: "Airlock logs", owner: "acme" });
  stackId = (await createStack(db)).id;
});
afterAll(() => fake.close());

/** The double's storage host, as GITHUB_LOG_HOSTS would name it (the API's own host is not on it). */
const logHosts = () => {
  const parsed = parseLogHosts(fake.blobUrl);
  if (!parsed.ok) throw new Error(parsed.error);
  return parsed.hosts;
};

/** A GitHub repository Airlock knows, installed with the app (on the double and in the database). */
async function installedRepository(opts: { installed?: boolean } = {}) {
  const fullName = `acme/logs-${++n}-${Date.now().toString(36)}`;
  fake.createRepository(fullName, { branch: "main", files: { "README.md": "hi\n" } });
  const installation = fake.apps.install({ appId: app.id, account: "acme", repositories: [fullName] });
  const repository = await createRepository({ fullName });
  await db.repository.update({ where: { id: repository.id }, data: { forge: "github", ...(opts.installed === false ? {} : { githubInstallationId: BigInt(installation.id) }) } });
  await createRule(db, { kind: "failed_check", stackId, repositoryId: repository.id });
  return { fullName, repository, installation };
}

const appReader = () => githubJobLogs({ githubApp: { appId: app.id, privateKey: app.pem }, githubToken: null, githubApiUrl: fake.url, logHosts: logHosts() });

/** A failed job in a step that names no stage: only its log can say what failed. */
const failure = (fullName: string, jobId: number) =>
  failedWorkflowJob({ repo: fullName, runId: jobId * 10, jobId, jobName: "ci", step: "Run script", headSha: sha(`${fullName}-${jobId}`), headBranch: "main" });

const logRequests = (jobId: number) => fake.requests.filter((r) => r.path.endsWith(`/actions/jobs/${jobId}/logs`));

describe("reading a GitHub job's log", () => {
  it("follows GitHub's 302 with the installation token, downloads without it, and stores the log redacted", async () => {
    const { fullName, repository } = await installedRepository();
    const jobId = 7_000_001;
    const secret = "ghp_leakedPersonalToken0123456789abcdef";
    fake.setJobLog(fullName, jobId, `${LOGS.vitestA}\n2025-04-01T10:00:01.0000000Z echo "using ${secret}"\n`);
    const posted = await post(failure(fullName, jobId));
    const result = await evaluateDelivery({ db, deliveryId: posted.deliveryId, jobLog: appReader() });

    const [asked] = logRequests(jobId);
    expect(asked?.authorization).toMatch(/^token ghs_/);
    const issued = fake.apps.issued.find((t) => `token ${t.token}` === asked?.authorization);
    expect(issued?.repositories).toEqual([fullName]);
    const download = fake.downloads.at(-1);
    expect(download?.path).toMatch(/^\/_blob\/actions-results\//);
    expect(download?.authorization).toBeUndefined();

    const job = await db.job.findFirstOrThrow({ where: { externalId: String(jobId), pipeline: { repositoryId: repository.id } } });
    expect(job.logExcerpt).toContain("formatRelative > formats yesterday");
    expect(job.failingTests).toContain("src/lib/date.test.ts > formatRelative > formats yesterday");
    expect(job.failureSignature).toMatch(/\S/);
    expect(result.detail).toMatch(/log of job 7000001 read from GitHub/);

    // Nothing Airlock stored keeps the secret: the job row, the run's context, the delivery.
    const run = await db.agentDispatchRun.findFirstOrThrow({ where: { repositoryId: repository.id } });
    const delivery = await db.webhookDelivery.findUniqueOrThrow({ where: { deliveryId: posted.deliveryId } });
    for (const stored of [job, run, delivery]) expect(JSON.stringify(stored, (_k, v) => (typeof v === "bigint" ? String(v) : v))).not.toContain(secret);
    expect(JSON.stringify(run.contextBundle)).toContain("[REDACTED:github_token");

    // Triage decided on the log's facts: the failing tests name the stage.
    const triage = await db.triageDecision.findFirstOrThrow({ where: { repositoryId: repository.id }, include: { policyDecision: true } });
    expect(triage.policyDecision?.facts).toMatchObject({ failing_stage: { value: "test" }, known_flaky: { value: false } });
    expect(triage.disposition).toBe("fix_forward");
    expect(triage.actionDetail).not.toMatch(/without the log/);

    // A redelivery reads the stored excerpt: GitHub is not asked again, and nothing is added.
    const again = await post(failure(fullName, jobId));
    const second = await evaluateDelivery({ db, deliveryId: again.deliveryId, jobLog: appReader() });
    expect(logRequests(jobId)).toHaveLength(1);
    expect(second.created).toEqual([]);
    expect(await db.triageDecision.count({ where: { repositoryId: repository.id } })).toBe(1);
  });

  it("without the log the same failure is escalated, saying which credential is missing", async () => {
    const { fullName, repository } = await installedRepository();
    const jobId = 7_000_002;
    fake.setJobLog(fullName, jobId, LOGS.vitestA);
    const posted = await post(failure(fullName, jobId));
    await evaluateDelivery({ db, deliveryId: posted.deliveryId, jobLog: githubJobLogs({ githubApp: null, githubToken: null, githubApiUrl: fake.url }) });
    expect(logRequests(jobId)).toHaveLength(0);
    const triage = await db.triageDecision.findFirstOrThrow({ where: { repositoryId: repository.id } });
    expect(triage.disposition).toBe("escalate_to_owner");
    expect(triage.actionDetail).toContain("decided without the log: the job's log could not be read: no GitHub App is set up (Settings → GitHub) and no GITHUB_TOKEN is configured");
    const delivery = await db.webhookDelivery.findUniqueOrThrow({ where: { deliveryId: posted.deliveryId } });
    expect(delivery.detail).toContain("no GitHub App is set up");

    // An app that is set up but not installed on the repository: that is what it says.
    const other = await installedRepository({ installed: false });
    const otherJob = 7_000_003;
    await evaluateDelivery({ db, deliveryId: (await post(failure(other.fullName, otherJob))).deliveryId, jobLog: appReader() });
    const otherTriage = await db.triageDecision.findFirstOrThrow({ where: { repositoryId: other.repository.id } });
    expect(otherTriage.actionDetail).toContain(`no installation of the GitHub App covers ${other.fullName} (install the app on it) and no GITHUB_TOKEN is configured`);
  });

  it("an expired (410) or unknown (404) log is named on the decision, and the evaluation goes on", async () => {
    const { fullName, repository } = await installedRepository();
    fake.setJobLog(fullName, 7_000_004, "gone");
    const gone = await evaluateDelivery({ db, deliveryId: (await post(failure(fullName, 7_000_004))).deliveryId, jobLog: appReader() });
    expect(gone.outcome).toBe("processed");
    expect(gone.detail).toContain("GitHub no longer has the log of job 7000004 (410 Gone");
    const unknown = await evaluateDelivery({ db, deliveryId: (await post(failure(fullName, 7_000_005))).deliveryId, jobLog: appReader() });
    expect(unknown.detail).toContain("GitHub has no log for job 7000005 (404");
    const decisions = await db.triageDecision.findMany({ where: { repositoryId: repository.id }, orderBy: { createdAt: "asc" } });
    expect(decisions.map((d) => d.disposition)).toEqual(["escalate_to_owner", "escalate_to_owner"]);
    expect(decisions[0]?.actionDetail).toContain("decided without the log: GitHub no longer has the log");
    expect(await db.agentDispatchRun.count({ where: { repositoryId: repository.id } })).toBe(2);
  });
});

describe("the bounds", () => {
  const client = () => githubClient({ auth: { kind: "token", token: fake.token }, baseUrl: fake.url, throttle: false });

  it("keeps the end of an oversized log behind a marker, starting on a whole line", async () => {
    const { fullName } = await installedRepository();
    const filler = Array.from({ length: 20_000 }, (_, i) => `2025-04-01T10:00:00.0000000Z line ${i} ${"é".repeat(20)}`).join("\n");
    const log = `${filler}\nFAIL src/sum.test.ts > sum > adds\n`;
    fake.setJobLog(fullName, 7_100_001, log);
    const read = await fetchJobLog({ client: client(), repository: fullName, jobId: "7100001", maxBytes: 64 * 1024, logHosts: logHosts() });
    expect(read.ok).toBe(true);
    if (!read.ok) return;
    const total = Buffer.byteLength(log);
    expect(read).toMatchObject({ truncated: true, bytes: total });
    const [marker, firstLine, ...rest] = read.text.split("\n");
    expect(marker).toMatch(new RegExp(`^\\[airlock: log truncated, the first \\d+ of ${total} bytes left out\\]$`));
    expect(firstLine).toMatch(/^2025-04-01T10:00:00.0000000Z line \d+ (é){20}$/);
    expect(read.text.endsWith("FAIL src/sum.test.ts > sum > adds\n")).toBe(true);
    expect(Buffer.byteLength(read.text)).toBeLessThanOrEqual(64 * 1024 + 200);
    expect(rest.length).toBeGreaterThan(100);

    // A log under the bound comes back whole, without a marker.
    const small = await fetchJobLog({ client: client(), repository: fullName, jobId: "7100001", logHosts: logHosts() });
    expect(small).toMatchObject({ ok: true, truncated: false, text: log });
  });

  it("stops a download past its cap, and gives up on a log that does not arrive in time", async () => {
    const { fullName } = await installedRepository();
    fake.setJobLog(fullName, 7_100_002, "x".repeat(2 * 1024 * 1024));
    const capped = await fetchJobLog({ client: client(), repository: fullName, jobId: "7100002", maxBytes: 1024, maxDownloadBytes: 256 * 1024, logHosts: logHosts() });
    expect(capped).toMatchObject({ ok: true, truncated: true });
    if (capped.ok) {
      expect(capped.bytes).toBeLessThan(1024 * 1024);
      expect(capped.text).toMatch(/^\[airlock: log truncated, the download stopped at \d+ bytes/);
    }

    fake.intercept(async (req) => {
      if (req.path.endsWith("/actions/jobs/7100002/logs")) await new Promise((done) => setTimeout(done, 1_500));
      return undefined;
    });
    try {
      const started = Date.now();
      const slow = await fetchJobLog({ client: client(), repository: fullName, jobId: "7100002", timeoutMs: 300, logHosts: logHosts() });
      expect(slow).toMatchObject({ ok: false, kind: "timeout" });
      expect(Date.now() - started).toBeLessThan(1_200);
    } finally {
      fake.intercept(null);
    }
  });

  it("refuses a job id that is not a number before asking GitHub", async () => {
    const before = fake.requests.length;
    expect(await fetchJobLog({ client: client(), repository: "acme/x", jobId: "1/../../secrets" })).toMatchObject({ ok: false, kind: "failed" });
    expect(fake.requests.length).toBe(before);
  });
});

describe("where the download may come from", () => {
  const client = () => githubClient({ auth: { kind: "token", token: fake.token }, baseUrl: fake.url, throttle: false });

  /** A server that must never be reached: it counts every request and what it carried. */
  async function bystander(answer: (url: string) => { status: number; location?: string } = () => ({ status: 200 })) {
    const hits: { url: string; authorization: string | undefined }[] = [];
    const server = createServer((req, res) => {
      hits.push({ url: req.url ?? "", authorization: req.headers.authorization });
      const a = answer(req.url ?? "");
      res.writeHead(a.status, a.location ? { location: a.location } : { "content-type": "text/plain" });
      res.end(a.location ? "" : "internal metadata: secret");
    });
    await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
    const url = `http://127.0.0.1:${(server.address() as import("node:net").AddressInfo).port}`;
    return { url, hits, close: () => new Promise<void>((done) => server.close(() => done())) };
  }

  it("refuses a redirect to 127.0.0.1 or any host off the list, naming the host, and fetches nothing there", async () => {
    const { fullName } = await installedRepository();
    fake.setJobLog(fullName, 7_200_001, LOGS.vitestA);
    const internal = await bystander();
    const hostile = [`${internal.url}/latest/meta-data/iam`, `${fake.url}/_blob/actions-results/x`, "https://productionresultssa0.blob.core.windows.net.evil.example/log", "https://evil.blob.core.windows.net/log", "http://productionresultssa1.blob.core.windows.net/log", "https://user:pw@pipelines.actions.githubusercontent.com/log"];
    try {
      for (const location of hostile) {
        fake.intercept((req) => (req.path.endsWith("/actions/jobs/7200001/logs") ? { status: 302, body: null, location } : undefined));
        // The default list (GitHub.com's hosts) and the double's storage host both refuse it.
        for (const hosts of [undefined, logHosts()]) {
          const read = await fetchJobLog({ client: client(), repository: fullName, jobId: "7200001", ...(hosts ? { logHosts: hosts } : {}) });
          expect(read).toMatchObject({ ok: false, kind: "host_not_allowed" });
          if (!read.ok) {
            expect(read.reason).toContain(`refused to download job 7200001's log from ${new URL(location).protocol}//${new URL(location).host}: not one of GitHub's log hosts (GITHUB_LOG_HOSTS: `);
            expect(read.reason).not.toContain("pw");
          }
        }
      }
      expect(internal.hits).toEqual([]);
    } finally {
      fake.intercept(null);
      await internal.close();
    }
  });

  it("checks every hop: an allowed storage host that redirects elsewhere is refused too", async () => {
    const { fullName } = await installedRepository();
    const internal = await bystander();
    // An allowed "storage" that sends the download on to 127.0.0.1's other service.
    const storage = await bystander(() => ({ status: 307, location: `${internal.url}/admin` }));
    const parsed = parseLogHosts(storage.url);
    if (!parsed.ok) throw new Error(parsed.error);
    fake.setJobLog(fullName, 7_200_002, LOGS.vitestA);
    fake.intercept((req) => (req.path.endsWith("/actions/jobs/7200002/logs") ? { status: 302, body: null, location: `${storage.url}/log?sig=abc` } : undefined));
    try {
      const read = await fetchJobLog({ client: client(), repository: fullName, jobId: "7200002", logHosts: parsed.hosts });
      expect(read).toMatchObject({ ok: false, kind: "host_not_allowed" });
      expect(storage.hits).toEqual([{ url: "/log?sig=abc", authorization: undefined }]);
      expect(internal.hits).toEqual([]);
    } finally {
      fake.intercept(null);
      await Promise.all([internal.close(), storage.close()]);
    }
  });

  it("a refused download is said on the delivery, and triage decides without the log", async () => {
    const { fullName, repository } = await installedRepository();
    const jobId = 7_200_003;
    fake.setJobLog(fullName, jobId, LOGS.vitestA);
    // The API root is fine; the default list does not hold the double's storage host.
    const reader = githubJobLogs({ githubApp: { appId: app.id, privateKey: app.pem }, githubToken: null, githubApiUrl: fake.url });
    const posted = await post(failure(fullName, jobId));
    const result = await evaluateDelivery({ db, deliveryId: posted.deliveryId, jobLog: reader });
    const before = fake.downloads.length;
    expect(result.detail).toContain(`refused to download job ${jobId}'s log from ${fake.blobUrl}: not one of GitHub's log hosts`);
    expect(fake.downloads.length).toBe(before);
    const triage = await db.triageDecision.findFirstOrThrow({ where: { repositoryId: repository.id } });
    expect(triage.actionDetail).toContain("decided without the log: refused to download");
  });
});
