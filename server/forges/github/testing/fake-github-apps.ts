import { generateKeyPairSync, randomBytes, verify, type KeyObject } from "node:crypto";

// The GitHub App half of the GitHub API test double (fake-github.ts serves it): the app-manifest
// conversion, app JWTs (RS256, `iss` = app id, at most 10 minutes), installations and their
// repository selections, and installation access tokens that expire and may be scoped to some
// repositories. Errors are GitHub's (status, message, documentation_url).

const docs = "https://docs.github.com/rest/apps/apps";

export class AppHttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly doc: string,
  ) {
    super(message);
  }
}

export type FakeApp = { id: number; slug: string; name: string; owner: string; pem: string; publicKey: KeyObject; webhookSecret: string; clientId: string; clientSecret: string };
export type FakeInstallation = {
  id: number;
  appId: number;
  account: string;
  accountType: "User" | "Organization";
  repositories: string[];
  suspended: boolean;
  /** Repositories listed as public (the others are private). */
  publicRepositories?: string[];
  /** Default branches other than main. */
  defaultBranches?: Record<string, string>;
};
type IssuedToken = { token: string; installationId: number; repositories: string[] | null; expiresAt: number };

export type FakeApps = {
  /** A manifest code GitHub would hand the redirect URL after a person creates the app. */
  manifestCode(manifest: Record<string, unknown>, owner: string): string;
  /** An app that exists already (the "existing app" path), with its private key. */
  createApp(opts: { name: string; owner: string }): FakeApp;
  install(opts: { appId: number; account: string; accountType?: "User" | "Organization"; repositories: string[]; publicRepositories?: string[]; defaultBranches?: Record<string, string> }): FakeInstallation;
  app(id: number): FakeApp | undefined;
  installation(id: number): FakeInstallation | undefined;
  /** Tokens issued so far (the tests check scopes and refreshes). */
  issued: IssuedToken[];
  /** Installation tokens live this long (GitHub: one hour). */
  setTokenTtl(ms: number): void;
  /** Moves the double's clock (installation token expiry). */
  advance(ms: number): void;
  now(): number;
  /** Answers /app-manifests and /app routes; null for anything else. */
  route(req: { method: string; path: string; body: unknown; authorization: string | undefined }): { status: number; body: unknown } | null;
  /** The installation token in the header, when it is one, valid now, and for the repository. */
  tokenAllows(authorization: string | undefined, fullName: string | null): "no_token" | "ok" | "bad_credentials" | "not_in_scope";
  /** The installation an installation token in the header belongs to (valid or not). */
  installationOf(authorization: string | undefined): FakeInstallation | undefined;
};

const b64url = (s: string) => Buffer.from(s, "base64url");

export function createFakeApps(base: () => string): FakeApps {
  const apps = new Map<number, FakeApp>();
  const installations = new Map<number, FakeInstallation>();
  const codes = new Map<string, { manifest: Record<string, unknown>; owner: string; expiresAt: number }>();
  const tokens = new Map<string, IssuedToken>();
  const issued: IssuedToken[] = [];
  let nextId = 500_000;
  let offset = 0;
  let ttl = 60 * 60 * 1000;
  const now = () => Date.now() + offset;

  function newApp(name: string, owner: string, manifest?: Record<string, unknown>): FakeApp {
    const { privateKey, publicKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
    const id = nextId++;
    const app: FakeApp = {
      id,
      slug: name.toLowerCase().replace(/[^a-z0-9]+/g, "-"),
      name,
      owner,
      pem: privateKey.export({ type: "pkcs1", format: "pem" }).toString(),
      publicKey,
      webhookSecret: randomBytes(20).toString("hex"),
      clientId: `Iv23${randomBytes(8).toString("hex")}`,
      clientSecret: randomBytes(20).toString("hex"),
    };
    void manifest;
    apps.set(id, app);
    return app;
  }

  const appJson = (app: FakeApp, manifest?: Record<string, unknown>) => ({
    id: app.id,
    slug: app.slug,
    node_id: `A_${app.id}`,
    owner: { login: app.owner, id: 1, type: "Organization" },
    name: app.name,
    description: (manifest?.description as string | undefined) ?? null,
    external_url: (manifest?.url as string | undefined) ?? "",
    html_url: `https://github.example.test/apps/${app.slug}`,
    created_at: new Date(now()).toISOString(),
    updated_at: new Date(now()).toISOString(),
    permissions: (manifest?.default_permissions as Record<string, string> | undefined) ?? { metadata: "read" },
    events: (manifest?.default_events as string[] | undefined) ?? [],
  });

  /** The app a JWT proves, or GitHub's 401. */
  function appFromJwt(authorization: string | undefined): FakeApp {
    const m = authorization?.match(/^bearer (.+)$/i);
    const parts = m?.[1]?.split(".");
    if (!parts || parts.length !== 3) throw new AppHttpError(401, "A JSON web token could not be decoded", docs);
    const [h, p, s] = parts as [string, string, string];
    let header: { alg?: string };
    let claims: { iss?: unknown; iat?: unknown; exp?: unknown };
    try {
      header = JSON.parse(b64url(h).toString("utf8"));
      claims = JSON.parse(b64url(p).toString("utf8"));
    } catch {
      throw new AppHttpError(401, "A JSON web token could not be decoded", docs);
    }
    if (header.alg !== "RS256") throw new AppHttpError(401, "A JSON web token could not be decoded", docs);
    const app = apps.get(Number(claims.iss));
    if (!app) throw new AppHttpError(401, "'Issuer' claim ('iss') must be an Integer", docs);
    if (!verify("RSA-SHA256", Buffer.from(`${h}.${p}`), app.publicKey, b64url(s))) throw new AppHttpError(401, "A JSON web token could not be decoded", docs);
    const t = Math.floor(Date.now() / 1000);
    if (typeof claims.iat !== "number" || claims.iat > t + 60) throw new AppHttpError(401, "'Issued at' claim ('iat') must be an Integer representing the time that the assertion was issued", docs);
    if (typeof claims.exp !== "number" || claims.exp <= t) throw new AppHttpError(401, "'Expiration time' claim ('exp') must be a numeric value representing the future time at which the assertion expires", docs);
    if (claims.exp - claims.iat > 660) throw new AppHttpError(401, "'Expiration time' claim ('exp') is too far in the future", docs);
    return app;
  }

  const installationJson = (i: FakeInstallation) => ({
    id: i.id,
    app_id: i.appId,
    account: { login: i.account, id: 1, type: i.accountType },
    repository_selection: "selected",
    target_type: i.accountType,
    suspended_at: i.suspended ? new Date(now()).toISOString() : null,
    access_tokens_url: `${base()}/app/installations/${i.id}/access_tokens`,
  });

  // A repository as GET /installation/repositories lists it (the fields Airlock reads, GitHub's names).
  const repositoryJson = (i: FakeInstallation, full: string, n: number) => {
    const isPrivate = !i.publicRepositories?.includes(full);
    return {
      id: 9000 + n,
      node_id: `R_${i.id}_${n}`,
      name: full.split("/")[1],
      full_name: full,
      private: isPrivate,
      visibility: isPrivate ? "private" : "public",
      owner: { login: i.account, id: 1, type: i.accountType },
      html_url: `https://github.example.test/${full}`,
      default_branch: i.defaultBranches?.[full] ?? "main",
    };
  };

  return {
    issued,
    now,
    manifestCode(manifest, owner) {
      const code = randomBytes(10).toString("hex");
      codes.set(code, { manifest, owner, expiresAt: now() + 60 * 60 * 1000 });
      return code;
    },
    createApp: ({ name, owner }) => newApp(name, owner),
    install({ appId, account, accountType = "Organization", repositories, publicRepositories, defaultBranches }) {
      const i: FakeInstallation = { id: nextId++, appId, account, accountType, repositories, suspended: false, publicRepositories, defaultBranches };
      installations.set(i.id, i);
      return i;
    },
    app: (id) => apps.get(id),
    installation: (id) => installations.get(id),
    setTokenTtl(ms) {
      ttl = ms;
    },
    advance(ms) {
      offset += ms;
    },
    route(req) {
      let g: RegExpMatchArray | null;
      // Unauthenticated: the code is the credential, valid once, for an hour.
      if (req.method === "POST" && (g = req.path.match(/^\/app-manifests\/([^/]+)\/conversions$/))) {
        const code = decodeURIComponent(g[1] as string);
        const pending = codes.get(code);
        codes.delete(code);
        if (!pending || pending.expiresAt < now()) throw new AppHttpError(404, "Not Found", `${docs}#create-a-github-app-from-a-manifest`);
        const name = typeof pending.manifest.name === "string" ? pending.manifest.name : "app";
        const app = newApp(name, pending.owner, pending.manifest);
        return { status: 201, body: { ...appJson(app, pending.manifest), client_id: app.clientId, client_secret: app.clientSecret, webhook_secret: app.webhookSecret, pem: app.pem } };
      }
      // The installation's own view (an installation token, not the app's JWT): its repositories.
      if (req.method === "GET" && req.path === "/installation/repositories") {
        const m = req.authorization?.match(/^(?:token|bearer) (ghs_.+)$/i);
        const t = m ? tokens.get(m[1] as string) : undefined;
        const i = t ? installations.get(t.installationId) : undefined;
        if (!t || t.expiresAt <= now() || !i || i.suspended) throw new AppHttpError(401, "Bad credentials", `${docs}#list-repositories-accessible-to-the-app-installation`);
        const visible = i.repositories.map((full, n) => ({ full, n })).filter(({ full }) => !t.repositories || t.repositories.includes(full.toLowerCase()));
        const repositories = visible.map(({ full, n }) => repositoryJson(i, full, n));
        return { status: 200, body: { total_count: repositories.length, repository_selection: "selected", repositories } };
      }
      if (!req.path.startsWith("/app")) return null;
      if (req.path.startsWith("/app-manifests/")) throw new AppHttpError(404, "Not Found", docs);
      const app = appFromJwt(req.authorization);
      if (req.method === "GET" && req.path === "/app") return { status: 200, body: appJson(app) };
      if (req.method === "GET" && req.path === "/app/installations") {
        return { status: 200, body: [...installations.values()].filter((i) => i.appId === app.id).map(installationJson) };
      }
      if (req.method === "GET" && (g = req.path.match(/^\/app\/installations\/(\d+)$/))) {
        const i = installations.get(Number(g[1]));
        if (!i || i.appId !== app.id) throw new AppHttpError(404, "Not Found", `${docs}#get-an-installation-for-the-authenticated-app`);
        return { status: 200, body: installationJson(i) };
      }
      if (req.method === "POST" && (g = req.path.match(/^\/app\/installations\/(\d+)\/access_tokens$/))) {
        const doc = `${docs}#create-an-installation-access-token-for-an-app`;
        const i = installations.get(Number(g[1]));
        if (!i || i.appId !== app.id) throw new AppHttpError(404, "Not Found", doc);
        if (i.suspended) throw new AppHttpError(403, "This installation has been suspended", doc);
        const body = (req.body ?? {}) as { repositories?: unknown };
        let scope: string[] | null = null;
        if (body.repositories !== undefined) {
          if (!Array.isArray(body.repositories) || body.repositories.some((n) => typeof n !== "string")) throw new AppHttpError(422, "Invalid request.", doc);
          const names = body.repositories as string[];
          const owned = new Set(i.repositories.map((full) => full.split("/")[1]?.toLowerCase()));
          if (names.some((n) => !owned.has(n.toLowerCase()))) throw new AppHttpError(422, "There is at least one repository that does not exist or is not accessible to the parent installation.", doc);
          scope = names.map((n) => `${i.account}/${n}`.toLowerCase());
        }
        const issuedToken: IssuedToken = { token: `ghs_${randomBytes(18).toString("base64url")}`, installationId: i.id, repositories: scope, expiresAt: now() + ttl };
        tokens.set(issuedToken.token, issuedToken);
        issued.push(issuedToken);
        const repositories = (scope ?? i.repositories.map((r) => r.toLowerCase())).map((full, n) => ({ id: 9000 + n, name: full.split("/")[1], full_name: full }));
        return {
          status: 201,
          body: { token: issuedToken.token, expires_at: new Date(issuedToken.expiresAt).toISOString().replace(/\.\d{3}Z$/, "Z"), permissions: { metadata: "read", contents: "write", checks: "write" }, repository_selection: "selected", repositories },
        };
      }
      throw new AppHttpError(404, "Not Found", docs);
    },
    installationOf(authorization) {
      const m = authorization?.match(/^(?:token|bearer) (ghs_.+)$/i);
      const t = m ? tokens.get(m[1] as string) : undefined;
      return t ? installations.get(t.installationId) : undefined;
    },
    tokenAllows(authorization, fullName) {
      const m = authorization?.match(/^(?:token|bearer) (ghs_.+)$/i);
      if (!m) return "no_token";
      const t = tokens.get(m[1] as string);
      if (!t || t.expiresAt <= now()) return "bad_credentials";
      const i = installations.get(t.installationId);
      if (!i || i.suspended) return "bad_credentials";
      if (fullName === null) return "ok";
      const name = fullName.toLowerCase();
      const inInstallation = i.repositories.some((r) => r.toLowerCase() === name);
      if (!inInstallation || (t.repositories && !t.repositories.includes(name))) return "not_in_scope";
      return "ok";
    },
  };
}
