// "Sign in with GitHub": the OAuth endpoints (GitHub's, or a GitHub Enterprise Server's) and what
// Airlock reads with the person's token: their profile, their emails (only verified ones count)
// and, when AIRLOCK_GITHUB_ORG is set, whether they are an active member of the organisation (and
// team). The admission decision itself is in admission.ts.

export type GitHubSignInConfig = {
  clientId: string;
  clientSecret: string;
  /** https://github.com, or https://HOST for GitHub Enterprise Server. */
  webUrl: string;
  /** https://api.github.com, or https://HOST/api/v3. */
  apiUrl: string;
  org: string | null;
  team: string | null;
};

export type GitHubEmail = { email: string; primary: boolean; verified: boolean };

/** What getUserInfo hands better-auth: the profile, and the facts admission needs. */
export type GitHubSignInProfile = {
  id: string;
  login: string;
  name: string;
  email: string;
  emailVerified: boolean;
  image: string | undefined;
  verifiedEmails: string[];
  /** null: no organisation is configured. */
  orgMember: boolean | null;
};

async function getJson(config: GitHubSignInConfig, token: string, path: string): Promise<{ status: number; body: unknown }> {
  const res = await fetch(`${config.apiUrl.replace(/\/$/, "")}${path}`, {
    headers: { authorization: `Bearer ${token}`, accept: "application/vnd.github+json", "user-agent": "airlock", "x-github-api-version": "2022-11-28" },
    redirect: "error",
    signal: AbortSignal.timeout(10_000),
  });
  const body = res.headers.get("content-type")?.includes("json") ? await res.json().catch(() => null) : null;
  return { status: res.status, body };
}

/** An active membership: GitHub answers 404 for no membership, `state: "pending"` for an invitation not yet accepted. */
async function isActiveMember(config: GitHubSignInConfig, token: string, login: string): Promise<boolean> {
  if (!config.org) return false;
  const org = encodeURIComponent(config.org);
  const path = config.team
    ? `/orgs/${org}/teams/${encodeURIComponent(config.team)}/memberships/${encodeURIComponent(login)}`
    : `/user/memberships/orgs/${org}`;
  const res = await getJson(config, token, path);
  return res.status === 200 && (res.body as { state?: unknown } | null)?.state === "active";
}

/**
 * The profile for a sign-in, or null when GitHub does not answer as it should. `preferEmail`
 * picks which verified email becomes the account's (one with an open invitation first).
 */
export async function gitHubProfile(
  config: GitHubSignInConfig,
  token: string,
  preferEmail: (verified: string[]) => Promise<string | null>,
): Promise<GitHubSignInProfile | null> {
  const user = await getJson(config, token, "/user");
  const u = user.body as { id?: unknown; login?: unknown; name?: unknown; avatar_url?: unknown } | null;
  if (user.status !== 200 || !u || (typeof u.id !== "number" && typeof u.id !== "string") || typeof u.login !== "string") return null;
  const emails = await getJson(config, token, "/user/emails");
  const list = (Array.isArray(emails.body) ? emails.body : []).filter(
    (e): e is GitHubEmail => typeof e === "object" && e !== null && typeof (e as GitHubEmail).email === "string",
  );
  const verified = list.filter((e) => e.verified === true).map((e) => e.email.toLowerCase());
  const primary = list.find((e) => e.primary);
  const email = (await preferEmail(verified)) ?? (primary?.verified ? primary.email.toLowerCase() : null) ?? verified[0] ?? primary?.email.toLowerCase() ?? null;
  if (!email) return null;
  return {
    id: String(u.id),
    login: u.login,
    name: typeof u.name === "string" && u.name ? u.name : u.login,
    email,
    emailVerified: verified.includes(email),
    image: typeof u.avatar_url === "string" ? u.avatar_url : undefined,
    verifiedEmails: verified,
    orgMember: config.org ? await isActiveMember(config, token, u.login) : null,
  };
}
