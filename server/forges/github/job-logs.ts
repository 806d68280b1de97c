import type { GithubClient } from "./client";
import { defaultLogHosts, logHostAllows, type LogHost } from "./log-hosts";

// A GitHub Actions job's log (GET /repos/{owner}/{repo}/actions/jobs/{job_id}/logs). GitHub
// answers 302 with a short-lived download URL; the download is fetched without Airlock's token
// (the URL carries its own signature, and a token must never travel to the storage host), only
// from GitHub's log hosts (log-hosts.ts: every hop of a redirect is checked, so neither GitHub's
// answer nor the storage can point Airlock at another host), streamed, and bounded: only the last `maxBytes` are kept (failures are reported at the end of a
// log), the download stops after `maxDownloadBytes`, and both requests share one time limit.
// Redaction is the caller's (evaluation/job-log.ts), with the same function as local logs.

export type JobLogResult =
  | {
      ok: true;
      text: string;
      /** Bytes GitHub's download served (what was read of it when it was cut). */
      bytes: number;
      /** True when bytes were left out; the text then starts with a marker line saying so. */
      truncated: boolean;
    }
  | { ok: false; reason: string; kind: "expired" | "not_found" | "refused" | "host_not_allowed" | "timeout" | "failed" };

export type JobLogOptions = {
  client: GithubClient;
  repository: string;
  jobId: string;
  /** Most bytes kept, from the end of the log (default 4 MiB, the local CI's bound). */
  maxBytes?: number;
  /** The download stops here (default 64 MiB). */
  maxDownloadBytes?: number;
  /** For the redirect and the download together (default 20 s). */
  timeoutMs?: number;
  /** Where the download may be fetched from (default GitHub.com's hosts; env GITHUB_LOG_HOSTS). */
  logHosts?: readonly LogHost[];
  fetch?: typeof fetch;
};

export const JOB_LOG_DEFAULTS = { maxBytes: 4 * 1024 * 1024, maxDownloadBytes: 64 * 1024 * 1024, timeoutMs: 20_000, maxRedirects: 3 } as const;

/** The first line of a log Airlock cut: what was left out, so a reader never mistakes it for the whole log. */
export const truncationMarker = (omitted: number, total: number, complete: boolean) =>
  complete
    ? `[airlock: log truncated, the first ${omitted} of ${total} bytes left out]`
    : `[airlock: log truncated, the download stopped at ${total} bytes and the first ${omitted} of them are left out]`;

export async function fetchJobLog(opts: JobLogOptions): Promise<JobLogResult> {
  const [owner, repo] = opts.repository.split("/");
  if (!owner || !repo) return { ok: false, kind: "failed", reason: `"${opts.repository}" is not owner/name` };
  if (!/^\d{1,20}$/.test(opts.jobId)) return { ok: false, kind: "failed", reason: `"${opts.jobId.slice(0, 40)}" is not a GitHub job id` };
  const maxBytes = opts.maxBytes ?? JOB_LOG_DEFAULTS.maxBytes;
  const maxDownload = Math.max(maxBytes, opts.maxDownloadBytes ?? JOB_LOG_DEFAULTS.maxDownloadBytes);
  const timeoutMs = opts.timeoutMs ?? JOB_LOG_DEFAULTS.timeoutMs;
  const signal = AbortSignal.timeout(timeoutMs);
  const timedOut = () => ({ ok: false as const, kind: "timeout" as const, reason: `GitHub's log for job ${opts.jobId} did not arrive within ${Math.round(timeoutMs / 1000)} s` });

  let location: string | undefined;
  try {
    const res = await opts.client.request("GET /repos/{owner}/{repo}/actions/jobs/{job_id}/logs", {
      owner,
      repo,
      job_id: Number(opts.jobId),
      // No 5xx retries: their back-off would outlast the time limit. A re-evaluation asks again.
      request: { redirect: "manual", signal, parseSuccessResponseBody: false, retries: 0 },
    });
    location = typeof res.headers.location === "string" ? res.headers.location : undefined;
    // Drain whatever body came with the redirect.
    await (res.data as unknown as ReadableStream | null)?.cancel?.().catch(() => {});
  } catch (err) {
    if (signal.aborted) return timedOut();
    const status = (err as { status?: number }).status;
    const message = ((err as Error).message ?? String(err)).slice(0, 200);
    if (status === 410) return { ok: false, kind: "expired", reason: `GitHub no longer has the log of job ${opts.jobId} (410 Gone: logs expire with the repository's retention)` };
    if (status === 404) return { ok: false, kind: "not_found", reason: `GitHub has no log for job ${opts.jobId} (404: expired, not an Actions job, or outside the token's repositories)` };
    if (status === 401 || status === 403) return { ok: false, kind: "refused", reason: `GitHub refused to hand out the log of job ${opts.jobId} (${status}: ${message}); the app needs the "actions: read" permission` };
    return { ok: false, kind: "failed", reason: `GitHub did not answer for the log of job ${opts.jobId}: ${status ?? ""} ${message}`.replace(/\s+/g, " ").trim() };
  }
  if (!location) return { ok: false, kind: "failed", reason: `GitHub answered the log request for job ${opts.jobId} without a download location` };
  const logHosts = opts.logHosts ?? defaultLogHosts();
  const doFetch = opts.fetch ?? fetch;
  try {
    // The storage may itself redirect; each hop is checked like GitHub's, and a loop ends.
    for (let hop = 0; ; hop++) {
      const url = downloadUrl(location, opts.jobId, logHosts);
      if ("refusal" in url) return url.refusal;
      // No authorization header: the signed URL is the credential, and the token stays with GitHub.
      const res = await doFetch(url.href, { redirect: "manual", signal });
      if (res.status >= 300 && res.status < 400) {
        await res.body?.cancel().catch(() => {});
        const next = res.headers.get("location");
        if (!next) return { ok: false, kind: "failed", reason: `the download of job ${opts.jobId}'s log answered ${res.status} without a location` };
        if (hop + 1 >= JOB_LOG_DEFAULTS.maxRedirects) return { ok: false, kind: "failed", reason: `the download of job ${opts.jobId}'s log redirected more than ${JOB_LOG_DEFAULTS.maxRedirects} times` };
        location = new URL(next, url).href;
        continue;
      }
      if (res.status === 404 || res.status === 410 || res.status === 403) {
        await res.body?.cancel().catch(() => {});
        return { ok: false, kind: "expired", reason: `the download of job ${opts.jobId}'s log answered ${res.status}: the link expired or the log was deleted` };
      }
      if (!res.ok || !res.body) {
        await res.body?.cancel().catch(() => {});
        return { ok: false, kind: "failed", reason: `the download of job ${opts.jobId}'s log answered ${res.status}` };
      }
      return await readTail(res.body, maxBytes, maxDownload);
    }
  } catch (err) {
    if (signal.aborted) return timedOut();
    return { ok: false, kind: "failed", reason: `the download of job ${opts.jobId}'s log failed: ${((err as Error).message ?? String(err)).slice(0, 200)}` };
  }
}

/** The next download URL, or why Airlock will not fetch it (the host is named, the signature is not). */
function downloadUrl(location: string, jobId: string, logHosts: readonly LogHost[]): URL | { refusal: JobLogResult } {
  let url: URL;
  try {
    url = new URL(location);
  } catch {
    return { refusal: { ok: false, kind: "failed", reason: `GitHub's download location for job ${jobId} is not a URL` } };
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") return { refusal: { ok: false, kind: "failed", reason: `GitHub's download location for job ${jobId} is not http(s)` } };
  if (url.username !== "" || url.password !== "" || !logHostAllows(logHosts, url)) {
    const allowed = logHosts.map((h) => h.entry).join(", ");
    return {
      refusal: {
        ok: false,
        kind: "host_not_allowed",
        reason: `refused to download job ${jobId}'s log from ${url.protocol}//${url.host}: not one of GitHub's log hosts (GITHUB_LOG_HOSTS: ${allowed})`,
      },
    };
  }
  return url;
}

/** Streams the body, keeping only its last `maxBytes`; stops reading after `maxDownload`. */
async function readTail(body: ReadableStream<Uint8Array>, maxBytes: number, maxDownload: number): Promise<JobLogResult> {
  const chunks: Uint8Array[] = [];
  let kept = 0;
  let total = 0;
  let complete = true;
  const reader = body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    chunks.push(value);
    kept += value.byteLength;
    while (chunks.length > 1 && kept - (chunks[0] as Uint8Array).byteLength >= maxBytes) kept -= (chunks.shift() as Uint8Array).byteLength;
    if (total >= maxDownload) {
      complete = false;
      await reader.cancel().catch(() => {});
      break;
    }
  }
  let bytes = Buffer.concat(chunks);
  if (bytes.byteLength > maxBytes) bytes = bytes.subarray(bytes.byteLength - maxBytes);
  const omitted = total - bytes.byteLength;
  if (omitted === 0 && complete) return { ok: true, text: bytes.toString("utf8"), bytes: total, truncated: false };
  // Start at a line boundary, so no half line (or half a UTF-8 character) opens the excerpt.
  const newline = bytes.indexOf(0x0a);
  const from = newline === -1 ? 0 : newline + 1;
  const text = `${truncationMarker(omitted + from, total, complete)}\n${bytes.subarray(from).toString("utf8")}`;
  return { ok: true, text, bytes: total, truncated: true };
}
