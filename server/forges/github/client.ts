import { createAppAuth } from "@octokit/auth-app";
import { retry } from "@octokit/plugin-retry";
import { throttling } from "@octokit/plugin-throttling";
import { Octokit } from "@octokit/rest";

// Every GitHub call goes through here. Octokit with the throttling plugin (writes paced as GitHub
// asks; a 403/429 rate limit waits for `retry-after` or the reset time, within a bound) and the
// retry plugin (5xx). Auth is a personal token, or a GitHub App installation token scoped to the
// one repository the call is for: minted from the app's JWT, cached until five minutes before it
// expires, then minted again.

const GithubOctokit = Octokit.plugin(throttling, retry);
export type GithubClient = InstanceType<typeof GithubOctokit>;

export type GithubAppCredentials = { appId: number | string; privateKey: string };

export type GithubAuth =
  | { kind: "token"; token: string }
  | { kind: "installation"; app: GithubAppCredentials; installationId: number | string; repository: string }
  /** Decided per request (which installation covers the repository is read at call time). */
  | { kind: "resolved"; token: () => Promise<string> };

export type GithubClientOptions = {
  auth: GithubAuth;
  baseUrl?: string | null;
  /** Longest rate-limit wait Airlock sits through (seconds); past it the call fails with GitHub's error. */
  maxWaitSeconds?: number;
  /** Rate-limit retries per request. */
  maxRetries?: number;
  /** Tests of other behaviour only: no write pacing and no rate-limit waits. */
  throttle?: boolean;
  now?: () => number;
};

// Octokit logs every failed request to the console; Airlock reports errors where they are handled.
const silent = { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} };

/** Minted tokens are reused until this long before their expiry. */
const REFRESH_MARGIN_MS = 5 * 60 * 1000;

type AppAuth = ReturnType<typeof createAppAuth>;
const appAuths = new Map<string, { auth: AppAuth; clock: { now: () => number } }>();

/** One auth-app instance per app (and API root), with a cache that knows when a token expires. */
function appAuthFor(app: GithubAppCredentials, baseUrl: string | null | undefined, now: () => number): AppAuth {
  const key = `${baseUrl ?? ""}|${app.appId}|${app.privateKey.length}|${app.privateKey.slice(-40)}`;
  const found = appAuths.get(key);
  if (found) {
    found.clock.now = now;
    return found.auth;
  }
  const clock = { now };
  const values = new Map<string, string>();
  // auth-app's default cache keeps a token 59 minutes whatever its expiry; this one reads the
  // expiry it stores ("token|createdAt|expiresAt|...").
  const cache = {
    get(k: string) {
      const v = values.get(k);
      const expiresAt = v ? Date.parse(v.split("|")[2] ?? "") : NaN;
      if (!v || !(expiresAt - REFRESH_MARGIN_MS > clock.now())) {
        values.delete(k);
        return ""; // auth-app reads a falsy value as a miss

      }
      return v;
    },
    set(k: string, v: string) {
      values.set(k, v);
    },
  };
  const auth = createAppAuth({
    appId: app.appId,
    privateKey: app.privateKey,
    cache,
    request: new Octokit({ ...(baseUrl ? { baseUrl } : {}), log: silent }).request,
  });
  appAuths.set(key, { auth, clock });
  return auth;
}

/** The installation token for one repository (`owner/name`), minted or cached. */
export async function installationToken(opts: { app: GithubAppCredentials; installationId: number | string; repository: string; baseUrl?: string | null; now?: () => number }): Promise<{ token: string; expiresAt: string }> {
  const name = opts.repository.split("/")[1];
  if (!name) throw new Error(`"${opts.repository}" is not owner/name`);
  const auth = appAuthFor(opts.app, opts.baseUrl, opts.now ?? Date.now);
  const result = await auth({ type: "installation", installationId: Number(opts.installationId), repositoryNames: [name] });
  return { token: result.token, expiresAt: result.expiresAt };
}

export function githubClient(opts: GithubClientOptions): GithubClient {
  const maxWait = opts.maxWaitSeconds ?? 60;
  const maxRetries = opts.maxRetries ?? 2;
  const onLimit = (retryAfter: number, _options: unknown, _octokit: unknown, retryCount: number) => retryCount < maxRetries && retryAfter <= maxWait;
  const auth = opts.auth;
  return new GithubOctokit({
    ...(opts.baseUrl ? { baseUrl: opts.baseUrl } : {}),
    ...(auth.kind === "token"
      ? { auth: auth.token }
      : auth.kind === "resolved"
        ? { authStrategy: () => repositoryScoped(async () => ({ token: await auth.token() })) }
        : {
            authStrategy: () => repositoryScoped(() => installationToken({ app: auth.app, installationId: auth.installationId, repository: auth.repository, baseUrl: opts.baseUrl, now: opts.now })),
          }),
    throttle: { enabled: opts.throttle !== false, onRateLimit: onLimit, onSecondaryRateLimit: onLimit },
    // Rate limits (403/429) are the throttling plugin's; the retry plugin takes 5xx and network errors.
    retry: { retries: 2, doNotRetry: [400, 401, 403, 404, 410, 422, 429, 451] },
    log: silent,
  });
}

type RequestFn = ((route: unknown, params?: unknown) => Promise<unknown>) & { endpoint: { merge: (route: unknown, params?: unknown) => { headers: Record<string, string> } } };

/** An Octokit auth strategy: each request carries a token from `getToken` (minted or cached). */
function repositoryScoped(getToken: () => Promise<{ token: string }>) {
  const auth = async () => ({ type: "token" as const, tokenType: "installation" as const, token: (await getToken()).token });
  return Object.assign(auth, {
    hook: async (request: RequestFn, route: unknown, parameters?: unknown) => {
      const endpoint = request.endpoint.merge(route, parameters);
      endpoint.headers.authorization = `token ${(await getToken()).token}`;
      return request(endpoint as never);
    },
  });
}
