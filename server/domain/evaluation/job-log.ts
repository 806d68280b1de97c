// The failed job's log for a GitHub failure, so triage and the agent have facts: GitHub's
// webhooks carry no log, so before the facts are read the live evaluation asks GitHub for it
// (forges/github/job-logs.ts: the job logs API with the repository's installation token, else
// the personal token; streamed, bounded, time-limited). The text is then redacted by the very
// function that redacts a local CI log on its delivery (`sanitizePayload` with the known
// secrets), and handed on as the delivery's log would be: the Job row keeps its excerpt and
// failure signature, so a redelivery or re-evaluation reads it from there and asks GitHub nothing.
// Without credentials nothing is fetched and the note says which one is missing.
import type { Db, Repository } from "@/server/db";
import { sanitizePayload } from "@/server/domain/ingest/delivery/store";
import { loadKnownSecrets } from "@/server/domain/ingest/known-secrets";
import { githubClient, installationToken, type GithubAppCredentials } from "@/server/forges/github/client";
import { fetchJobLog, type JobLogOptions, type JobLogResult } from "@/server/forges/github/job-logs";
import type { ScreenedEvent } from "./load";

export type JobLogRead = JobLogResult | { ok: false; kind: "no_credentials"; reason: string };

/** Reads one GitHub Actions job's log (raw: redaction is attachJobLog's). */
export type JobLogReader = (query: { repository: Pick<Repository, "fullName" | "githubInstallationId">; jobId: string }) => Promise<JobLogRead>;

type AppCredentials = Pick<GithubAppCredentials, "appId" | "privateKey">;

export type JobLogSettings = {
  /** The app's credentials, or a function reading them (called only when a log is needed). */
  githubApp: AppCredentials | null | (() => Promise<AppCredentials | null>);
  githubToken: string | null;
  githubApiUrl: string | null;
  /** Where the log's download may come from (env GITHUB_LOG_HOSTS; default GitHub.com's). */
  logHosts?: JobLogOptions["logHosts"];
  limits?: Pick<JobLogOptions, "maxBytes" | "maxDownloadBytes" | "timeoutMs">;
};

/** Which credential reads a repository's logs, or a sentence naming the one that is missing. */
export function githubJobLogs(settings: JobLogSettings): JobLogReader {
  let app: Promise<AppCredentials | null> | null = null;
  const appCredentials = () => (app ??= typeof settings.githubApp === "function" ? settings.githubApp() : Promise.resolve(settings.githubApp));
  return async ({ repository, jobId }) => {
    const installed = repository.githubInstallationId ?? null;
    const githubApp = await appCredentials();
    let token: string;
    if (githubApp && installed !== null) {
      try {
        token = (await installationToken({ app: githubApp, installationId: installed.toString(), repository: repository.fullName, baseUrl: settings.githubApiUrl })).token;
      } catch (err) {
        return { ok: false, kind: "refused", reason: `GitHub refused an installation token for ${repository.fullName}: ${((err as Error).message ?? String(err)).slice(0, 200)}` };
      }
    } else if (settings.githubToken) {
      token = settings.githubToken;
    } else {
      const missing = githubApp
        ? `no installation of the GitHub App covers ${repository.fullName} (install the app on it) and no GITHUB_TOKEN is configured`
        : "no GitHub App is set up (Settings → GitHub) and no GITHUB_TOKEN is configured";
      return { ok: false, kind: "no_credentials", reason: `the job's log could not be read: ${missing}` };
    }
    const client = githubClient({ auth: { kind: "token", token }, baseUrl: settings.githubApiUrl });
    return fetchJobLog({ client, repository: repository.fullName, jobId, logHosts: settings.logHosts, ...settings.limits });
  };
}

export type AttachedLog = { screened: ScreenedEvent; note: string | null };

/**
 * For a GitHub failed job whose log Airlock does not hold yet: the log, redacted, as the
 * screened delivery's `extras.log`, and one sentence for the delivery's detail (and for triage,
 * when it has to decide without the log). Anything else passes through untouched.
 */
export async function attachJobLog(opts: { db: Db; screened: ScreenedEvent; reader: JobLogReader | null; now: Date }): Promise<AttachedLog> {
  const { db, screened } = opts;
  const { event, repository } = screened;
  const untouched = { screened, note: null };
  if (event.type !== "failed_check" || repository.forge !== "github" || event.jobId === null) return untouched;
  if (event.via !== "workflow_job" && event.via !== "check_run") return untouched;
  if (screened.extras.log !== null || !opts.reader) return untouched;
  const stored = await db.job.findFirst({
    where: { externalId: event.jobId, pipeline: { repositoryId: repository.id, externalId: event.runId } },
    select: { logExcerpt: true },
  });
  if (stored && stored.logExcerpt !== "") return untouched;

  const read = await opts.reader({ repository, jobId: event.jobId });
  if (!read.ok) return { screened, note: read.reason };
  const secrets = await loadKnownSecrets(db, opts.now);
  const log = sanitizePayload(read.text, secrets);
  const size = read.bytes >= 1024 * 1024 ? `${(read.bytes / 1024 / 1024).toFixed(1)} MiB` : `${Math.ceil(read.bytes / 1024)} KiB`;
  return {
    screened: { ...screened, extras: { ...screened.extras, log } },
    note: `log of job ${event.jobId} read from GitHub (${size}${read.truncated ? ", truncated to its end" : ""})`,
  };
}
