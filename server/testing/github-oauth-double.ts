import { createHash, randomBytes } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

// A TEST DOUBLE of GitHub's OAuth web flow and the REST endpoints sign-in reads, owned by the
// tests (this machine cannot reach github.com). It follows GitHub's protocol as documented:
//   GET  /login/oauth/authorize          -> 302 to redirect_uri with ?code&state (the "signed-in"
//                                           GitHub user approves at once)
//   POST /login/oauth/access_token        form body; client_id/secret in the body or Basic auth;
//                                           PKCE S256 checked; JSON when Accept asks for it, else
//                                           form; a bad code is 200 with {"error": ...}, as GitHub does
//   GET  /api/v3/user, /user/emails       Bearer token
//   GET  /api/v3/user/memberships/orgs/:org               404 when not a member (needs read:org)
//   GET  /api/v3/orgs/:org/teams/:team/memberships/:user  404 when not a member (needs read:org)

export type DoubleUser = {
  id: number;
  login: string;
  name: string | null;
  emails: { email: string; primary: boolean; verified: boolean }[];
  /** org login -> membership state */
  orgs?: Record<string, "active" | "pending">;
  /** "org/team-slug" -> membership state */
  teams?: Record<string, "active" | "pending">;
};

type Grant = { login: string; redirectUri: string; challenge: string | null; scope: string; used: boolean };

export type GitHubOAuthDouble = {
  url: string;
  apiUrl: string;
  clientId: string;
  clientSecret: string;
  users: Map<string, DoubleUser>;
  /** The GitHub account the next authorization is approved as. */
  signIn(login: string): void;
  /** Every request the double answered, as "METHOD /path". */
  requests: string[];
  close(): Promise<void>;
};

const body = (req: IncomingMessage) =>
  new Promise<string>((resolve) => {
    let text = "";
    req.setEncoding("utf8").on("data", (c: string) => (text += c)).on("end", () => resolve(text));
  });

export async function startGitHubOAuthDouble(): Promise<GitHubOAuthDouble> {
  const clientId = "Iv1.testdouble00001";
  const clientSecret = randomBytes(20).toString("hex");
  const users = new Map<string, DoubleUser>();
  const grants = new Map<string, Grant>();
  const tokens = new Map<string, { login: string; scope: string }>();
  const requests: string[] = [];
  let signedIn: string | null = null;

  const json = (res: ServerResponse, status: number, value: unknown) => {
    res.writeHead(status, { "content-type": "application/json; charset=utf-8" });
    res.end(JSON.stringify(value));
  };

  const server: Server = createServer(async (req, res) => {
    const url = new URL(req.url ?? "/", "http://double");
    requests.push(`${req.method} ${url.pathname}`);
    if (req.method === "GET" && url.pathname === "/login/oauth/authorize") {
      const redirect = url.searchParams.get("redirect_uri");
      if (url.searchParams.get("client_id") !== clientId || !redirect || !signedIn) return json(res, 400, { error: "bad request" });
      const code = randomBytes(10).toString("hex");
      const method = url.searchParams.get("code_challenge_method");
      if (method && method !== "S256") return json(res, 400, { error: "unsupported code_challenge_method" });
      grants.set(code, { login: signedIn, redirectUri: redirect, challenge: url.searchParams.get("code_challenge"), scope: url.searchParams.get("scope") ?? "", used: false });
      const to = new URL(redirect);
      to.searchParams.set("code", code);
      const state = url.searchParams.get("state");
      if (state) to.searchParams.set("state", state);
      res.writeHead(302, { location: to.toString() });
      return res.end();
    }
    if (req.method === "POST" && url.pathname === "/login/oauth/access_token") {
      const form = new URLSearchParams(await body(req));
      const basic = /^Basic (.+)$/.exec(req.headers.authorization ?? "")?.[1];
      const [id, secret] = basic ? Buffer.from(basic, "base64").toString().split(":").map(decodeURIComponent) : [form.get("client_id"), form.get("client_secret")];
      const grant = grants.get(form.get("code") ?? "");
      const verifier = form.get("code_verifier");
      const answer = (value: Record<string, string>) => {
        if ((req.headers.accept ?? "").includes("json")) return json(res, 200, value);
        res.writeHead(200, { "content-type": "application/x-www-form-urlencoded" });
        res.end(new URLSearchParams(value).toString());
      };
      if (id !== clientId || secret !== clientSecret) return answer({ error: "incorrect_client_credentials" });
      if (!grant || grant.used || grant.redirectUri !== form.get("redirect_uri")) return answer({ error: "bad_verification_code" });
      if (grant.challenge && (!verifier || createHash("sha256").update(verifier).digest("base64url") !== grant.challenge)) return answer({ error: "bad_verification_code" });
      grant.used = true;
      const token = `gho_${randomBytes(18).toString("hex")}`;
      tokens.set(token, { login: grant.login, scope: grant.scope.replaceAll(" ", ",") });
      return answer({ access_token: token, token_type: "bearer", scope: grant.scope.replaceAll(" ", ",") });
    }
    if (req.method === "GET" && url.pathname.startsWith("/api/v3/")) {
      const token = tokens.get(/^Bearer (.+)$/i.exec(req.headers.authorization ?? "")?.[1] ?? "");
      const user = token ? users.get(token.login) : undefined;
      if (!token || !user) return json(res, 401, { message: "Requires authentication" });
      const path = url.pathname.slice("/api/v3".length);
      if (path === "/user") {
        const primary = user.emails.find((e) => e.primary);
        return json(res, 200, { id: user.id, login: user.login, name: user.name, email: primary?.verified ? primary.email : null, avatar_url: `https://avatars.example/${user.id}` });
      }
      if (path === "/user/emails") return json(res, 200, user.emails.map((e) => ({ ...e, visibility: e.primary ? "public" : null })));
      const readOrg = token.scope.split(",").includes("read:org");
      const org = /^\/user\/memberships\/orgs\/([^/]+)$/.exec(path);
      if (org) {
        if (!readOrg) return json(res, 403, { message: "You need at least read:org scope" });
        const state = user.orgs?.[decodeURIComponent(org[1]!)];
        return state ? json(res, 200, { state, role: "member", organization: { login: org[1] } }) : json(res, 404, { message: "Not Found" });
      }
      const team = /^\/orgs\/([^/]+)\/teams\/([^/]+)\/memberships\/([^/]+)$/.exec(path);
      if (team) {
        if (!readOrg) return json(res, 403, { message: "You need at least read:org scope" });
        const member = users.get(decodeURIComponent(team[3]!));
        const state = member?.teams?.[`${decodeURIComponent(team[1]!)}/${decodeURIComponent(team[2]!)}`];
        return state ? json(res, 200, { state, role: "member" }) : json(res, 404, { message: "Not Found" });
      }
    }
    json(res, 404, { message: "Not Found" });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    apiUrl: `${url}/api/v3`,
    clientId,
    clientSecret,
    users,
    requests,
    signIn: (login) => void (signedIn = login),
    close: () => new Promise((r) => server.close(() => r())),
  };
}
