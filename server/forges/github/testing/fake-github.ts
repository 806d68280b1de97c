import { createHash } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { AppHttpError, createFakeApps, type FakeApps } from "./fake-github-apps";
import { ChecksHttpError, createFakeChecks, type FakeChecks } from "./fake-github-checks";

// A small GitHub REST API for tests of the GitHub forge: exactly the endpoints
// server/forges/github/write-back.ts calls (labels, review requests and reruns of failed jobs included), with GitHub's
// request and response shapes (JSON bodies, status codes, `{ message, documentation_url, status }` errors, Link pagination).
// Repositories hold real content: blobs are hashed like git, trees map paths to blobs, commits
// point at trees and parents, and a non-forced ref update must be a fast-forward (else GitHub's
// 422 "Update is not a fast forward"). Tests read the state back to assert what really changed.

type Blob = { content: Buffer };
type TreeEntry = { mode: string; sha: string };
type Commit = { sha: string; message: string; tree: string; parents: string[]; date: string };
type Comment = { id: number; body: string; createdAt: string };
type Review = { id: number; body: string; state: string; commitId: string; submittedAt: string };
type WorkflowRun = { id: number; status: "queued" | "in_progress" | "completed"; conclusion: string | null; runAttempt: number; headSha: string; headBranch: string; jobs?: { id: number; name: string; conclusion: string | null }[] };

export type FakeRepo = {
  defaultBranch: string;
  private: boolean;
  refs: Map<string, string>;
  blobs: Map<string, Blob>;
  trees: Map<string, Map<string, TreeEntry>>;
  commits: Map<string, Commit>;
  comments: Map<number, Comment[]>;
  reviews: Map<number, Review[]>;
  pulls: Set<number>;
  workflowRuns: Map<number, WorkflowRun>;
  /** The repository's labels by name (GitHub creates one when an issue is first given it). */
  labels: Map<string, Label>;
  /** Label names on each issue or pull request, in the order they were added. */
  issueLabels: Map<number, string[]>;
  /** Logins asked to review each pull request (pulls.requestReviewers). */
  requestedReviewers: Map<number, string[]>;
  /** Repository roles of people (GitHub's role_name: admin, maintain, write, triage, read). */
  collaborators: Map<string, "admin" | "maintain" | "write" | "triage" | "read">;
  /** Actions job logs by job id; "gone" once GitHub's retention deleted them (410). */
  jobLogs: Map<number, Buffer | "gone">;
  /** Pull requests opened through POST /pulls (open_pr), by number. */
  openedPulls: Map<number, FakePull>;
  /** Tags (refs/tags/<name>) and the commit each points at. */
  tags: Map<string, string>;
  /** Releases created through POST /releases (publish_release), with their uploaded assets. */
  releases: FakeRelease[];
};

export type FakePull = { number: number; title: string; body: string; head: string; base: string; headSha: string; state: "open" | "closed" };
export type FakeRelease = { id: number; tagName: string; name: string; body: string; targetCommitish: string; assets: { id: number; name: string; content: Buffer }[] };

type Label = { id: number; name: string; color: string; description: string | null };

export type RecordedRequest = { method: string; path: string; query: URLSearchParams; body: unknown; authorization: string | undefined };

/** Return a response to answer the request yourself (failure injection), or undefined to let it through. */
export type Interceptor = (req: RecordedRequest) => Injected | undefined | Promise<Injected | undefined>;
/** An injected answer; with a `location`, a redirect (as a hostile or broken API root might send). */
type Injected = { status: number; body: unknown; location?: string };

const docs = "https://docs.github.com/rest";

const gitSha = (type: string, payload: Buffer) => createHash("sha1").update(Buffer.concat([Buffer.from(`${type} ${payload.length}\0`), payload])).digest("hex");

/** GitHub's rate-limit answers: primary (x-ratelimit-remaining: 0 and a reset time) or secondary (retry-after). */
export type RateLimitInjection = { status: 403 | 429; kind: "primary" | "secondary"; retryAfterSeconds: number; times: number };

export type FakeGithub = {
  url: string;
  /** The log storage host, apart from the API as on GitHub (the job-logs redirect points here). */
  blobUrl: string;
  token: string;
  requests: RecordedRequest[];
  /** GitHub Apps: manifest conversion, app JWTs, installations, installation tokens. */
  apps: FakeApps;
  /** Check runs: created and updated by an app's installation token (fake-github-checks.ts). */
  checks: FakeChecks;
  /** The next `times` requests (token requests included) are refused as GitHub's rate limits refuse them. */
  rateLimit(injection: RateLimitInjection): void;
  createRepository(fullName: string, opts: { branch: string; files: Record<string, string>; executable?: string[]; pulls?: number[]; private?: boolean }): { headSha: string };
  /** Someone else pushes to the branch (a new commit on the tip). */
  pushCommit(fullName: string, branch: string, files: Record<string, string>, message: string): string;
  addWorkflowRun(fullName: string, run: Omit<WorkflowRun, "runAttempt"> & { runAttempt?: number }): void;
  /** A job's log, served as GitHub does: the API answers 302 to a signed download URL on another path. */
  setJobLog(fullName: string, jobId: number, log: string | Buffer | "gone"): void;
  /** A person's role on the repository (GET .../collaborators/{username}/permission). */
  setCollaborator(fullName: string, login: string, role: "admin" | "maintain" | "write" | "triage" | "read"): void;
  /** Downloads served so far (path and the authorization header they carried, which must be none). */
  downloads: RecordedRequest[];
  /** The label names on an issue or pull request. */
  labelsOn(fullName: string, issue: number): string[];
  /** A person labels an issue or pull request on GitHub. */
  setIssueLabels(fullName: string, issue: number, labels: string[]): void;
  repo(fullName: string): FakeRepo;
  /** The file contents of the commit a branch points at. */
  filesAt(fullName: string, branch: string): Record<string, string>;
  modeAt(fullName: string, branch: string, path: string): string | undefined;
  branchHead(fullName: string, branch: string): string | undefined;
  commit(fullName: string, sha: string): Commit | undefined;
  /** Commits reachable from the branch tip, newest first. */
  history(fullName: string, branch: string): Commit[];
  intercept(fn: Interceptor | null): void;
  close(): Promise<void>;
};

class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly doc: string,
    readonly errors?: unknown[],
  ) {
    super(message);
  }
}

export async function startFakeGithub(opts: { token?: string } = {}): Promise<FakeGithub> {
  const token = opts.token ?? "ghp_fakeTestToken0123456789";
  const repos = new Map<string, FakeRepo>();
  const requests: RecordedRequest[] = [];
  const downloads: RecordedRequest[] = [];
  /** Signed download URLs handed out by the job-logs redirect: key -> log bytes. */
  const signedDownloads = new Map<string, Buffer>();
  let interceptor: Interceptor | null = null;
  let limited: RateLimitInjection | null = null;
  const apps = createFakeApps(() => base);
  let nextId = 1000;
  let clock = Date.parse("2026-11-30T00:00:00Z");
  const now = () => new Date((clock += 1000)).toISOString().replace(/\.\d{3}Z$/, "Z");
  let base = "";
  let blobBase = "";
  const web = "https://github.example.test";
  const checks = createFakeChecks({ apps, base: () => base, web, now: () => now(), nextId: () => nextId++ });

  const getRepo = (fullName: string) => {
    const r = repos.get(fullName);
    if (!r) throw new HttpError(404, "Not Found", `${docs}/repos/repos#get-a-repository`);
    return r;
  };

  function putBlob(r: FakeRepo, content: Buffer) {
    const sha = gitSha("blob", content);
    r.blobs.set(sha, { content });
    return sha;
  }
  function putTree(r: FakeRepo, entries: Map<string, TreeEntry>) {
    const canonical = [...entries.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([p, e]) => `${e.mode} ${p}\0${e.sha}`).join("");
    const sha = gitSha("tree", Buffer.from(canonical));
    r.trees.set(sha, entries);
    return sha;
  }
  function putCommit(r: FakeRepo, message: string, tree: string, parents: string[]) {
    const date = now();
    const sha = gitSha("commit", Buffer.from(`tree ${tree}\n${parents.map((p) => `parent ${p}\n`).join("")}date ${date}\n\n${message}`));
    const c = { sha, message, tree, parents, date };
    r.commits.set(sha, c);
    return c;
  }
  function treeOf(r: FakeRepo, files: Record<string, string>, baseTree?: Map<string, TreeEntry>, executable: string[] = []) {
    const entries = new Map(baseTree ?? []);
    for (const [path, content] of Object.entries(files)) entries.set(path, { mode: executable.includes(path) ? "100755" : "100644", sha: putBlob(r, Buffer.from(content)) });
    return putTree(r, entries);
  }
  const isAncestor = (r: FakeRepo, ancestor: string, of: string): boolean => {
    const seen = new Set<string>();
    const stack = [of];
    while (stack.length) {
      const sha = stack.pop() as string;
      if (sha === ancestor) return true;
      if (seen.has(sha)) continue;
      seen.add(sha);
      stack.push(...(r.commits.get(sha)?.parents ?? []));
    }
    return false;
  };
  const history = (r: FakeRepo, tip: string): Commit[] => {
    const out: Commit[] = [];
    let sha: string | undefined = tip;
    while (sha) {
      const c = r.commits.get(sha);
      if (!c) break;
      out.push(c);
      sha = c.parents[0];
    }
    return out;
  };

  const api = (fullName: string) => `${base}/repos/${fullName}`;
  const user = { login: "airlock-bot", id: 4242, node_id: "MDQ6VXNlcjQyNDI=", type: "Bot", site_admin: false };
  const person = (date: string) => ({ name: "Airlock", email: "airlock@example.test", date });
  const commitJson = (fullName: string, c: Commit) => ({
    sha: c.sha,
    node_id: `C_${c.sha.slice(0, 12)}`,
    url: `${api(fullName)}/git/commits/${c.sha}`,
    html_url: `${web}/${fullName}/commit/${c.sha}`,
    author: person(c.date),
    committer: person(c.date),
    message: c.message,
    tree: { sha: c.tree, url: `${api(fullName)}/git/trees/${c.tree}` },
    parents: c.parents.map((p) => ({ sha: p, url: `${api(fullName)}/git/commits/${p}`, html_url: `${web}/${fullName}/commit/${p}` })),
    verification: { verified: false, reason: "unsigned", signature: null, payload: null, verified_at: null },
  });
  const refJson = (fullName: string, branch: string, sha: string) => ({
    ref: `refs/heads/${branch}`,
    node_id: `REF_${branch}`,
    url: `${api(fullName)}/git/refs/heads/${branch}`,
    object: { sha, type: "commit", url: `${api(fullName)}/git/commits/${sha}` },
  });
  const commentJson = (fullName: string, issue: number, c: Comment) => ({
    id: c.id,
    node_id: `IC_${c.id}`,
    url: `${api(fullName)}/issues/comments/${c.id}`,
    html_url: `${web}/${fullName}/pull/${issue}#issuecomment-${c.id}`,
    issue_url: `${api(fullName)}/issues/${issue}`,
    body: c.body,
    user,
    created_at: c.createdAt,
    updated_at: c.createdAt,
    author_association: "NONE",
  });
  const labelJson = (fullName: string, l: Label) => ({
    id: l.id,
    node_id: `LA_${l.id}`,
    url: `${api(fullName)}/labels/${encodeURIComponent(l.name)}`,
    name: l.name,
    color: l.color,
    default: false,
    description: l.description,
  });
  /** An existing label matches case-insensitively, as on GitHub; a new name creates one. */
  const labelNamed = (r: FakeRepo, name: string): Label => {
    const found = [...r.labels.values()].find((l) => l.name.toLowerCase() === name.toLowerCase());
    if (found) return found;
    const made = { id: nextId++, name, color: "ededed", description: null };
    r.labels.set(name, made);
    return made;
  };
  const issueLabelsJson = (fullName: string, r: FakeRepo, issue: number) => (r.issueLabels.get(issue) ?? []).map((n) => labelJson(fullName, labelNamed(r, n)));
  const reviewJson = (fullName: string, pull: number, r: Review) => ({
    id: r.id,
    node_id: `PRR_${r.id}`,
    user,
    body: r.body,
    state: r.state,
    html_url: `${web}/${fullName}/pull/${pull}#pullrequestreview-${r.id}`,
    pull_request_url: `${api(fullName)}/pulls/${pull}`,
    author_association: "NONE",
    _links: { html: { href: `${web}/${fullName}/pull/${pull}#pullrequestreview-${r.id}` }, pull_request: { href: `${api(fullName)}/pulls/${pull}` } },
    submitted_at: r.submittedAt,
    commit_id: r.commitId,
  });
  const runJson = (fullName: string, w: WorkflowRun) => ({
    id: w.id,
    name: "CI",
    node_id: `WFR_${w.id}`,
    head_branch: w.headBranch,
    head_sha: w.headSha,
    run_number: w.id % 1000,
    run_attempt: w.runAttempt,
    event: "pull_request",
    status: w.status,
    conclusion: w.conclusion,
    workflow_id: 1,
    url: `${api(fullName)}/actions/runs/${w.id}`,
    html_url: `${web}/${fullName}/actions/runs/${w.id}`,
    created_at: "2026-11-30T00:00:00Z",
    updated_at: now(),
  });

  const pullJson = (fullName: string, p: FakePull) => ({
    id: p.number,
    number: p.number,
    node_id: `PR_${p.number}`,
    url: `${api(fullName)}/pulls/${p.number}`,
    html_url: `${web}/${fullName}/pull/${p.number}`,
    state: p.state,
    title: p.title,
    body: p.body,
    user,
    head: { ref: p.head, sha: p.headSha, label: `${fullName.split("/")[0]}:${p.head}` },
    base: { ref: p.base, label: `${fullName.split("/")[0]}:${p.base}` },
    draft: false,
    merged: false,
  });
  const assetJson = (fullName: string, a: { id: number; name: string; content: Buffer }) => ({
    id: a.id,
    node_id: `RA_${a.id}`,
    name: a.name,
    label: null,
    state: "uploaded",
    size: a.content.length,
    url: `${api(fullName)}/releases/assets/${a.id}`,
    browser_download_url: `${web}/${fullName}/releases/download/${a.id}/${a.name}`,
  });
  const releaseJson = (fullName: string, rel: FakeRelease) => ({
    id: rel.id,
    node_id: `RE_${rel.id}`,
    tag_name: rel.tagName,
    name: rel.name,
    body: rel.body,
    target_commitish: rel.targetCommitish,
    draft: false,
    prerelease: false,
    url: `${api(fullName)}/releases/${rel.id}`,
    html_url: `${web}/${fullName}/releases/tag/${rel.tagName}`,
    upload_url: `${api(fullName)}/releases/${rel.id}/assets{?name,label}`,
    assets: rel.assets.map((a) => assetJson(fullName, a)),
    author: user,
  });

  /** GitHub pages lists with `per_page` (max 100) and `page`, and a Link header. */
  function paged<T>(req: RecordedRequest, items: T[]): { body: T[]; link?: string } {
    const perPage = Math.min(Number(req.query.get("per_page") ?? 30) || 30, 100);
    const page = Math.max(Number(req.query.get("page") ?? 1) || 1, 1);
    const body = items.slice((page - 1) * perPage, page * perPage);
    const last = Math.max(Math.ceil(items.length / perPage), 1);
    const at = (p: number) => {
      const q = new URLSearchParams(req.query);
      q.set("page", String(p));
      q.set("per_page", String(perPage));
      return `<${base}${req.path}?${q}>`;
    };
    const links = [...(page < last ? [`${at(page + 1)}; rel="next"`, `${at(last)}; rel="last"`] : []), ...(page > 1 ? [`${at(1)}; rel="first"`, `${at(page - 1)}; rel="prev"`] : [])];
    return { body, ...(links.length ? { link: links.join(", ") } : {}) };
  }

  const requireString = (body: Record<string, unknown>, field: string, doc: string) => {
    const v = body[field];
    if (typeof v !== "string") throw new HttpError(422, "Invalid request.", doc, [{ resource: "Request", field, code: "missing_field" }]);
    return v;
  };

  async function route(req: RecordedRequest): Promise<{ status: number; body: unknown; link?: string; location?: string }> {
    const m = req.path.match(/^\/repos\/([^/]+\/[^/]+)(\/.*)?$/);
    if (!m) throw new HttpError(404, "Not Found", docs);
    const fullName = m[1] as string;
    const rest = m[2] ?? "";
    const r = getRepo(fullName);
    if (req.method === "GET" && rest === "") {
      const [owner, name] = fullName.split("/");
      return { status: 200, body: { id: nextId++, name, full_name: fullName, owner: { login: owner }, private: r.private, visibility: r.private ? "private" : "public", default_branch: r.defaultBranch, html_url: `${web}/${fullName}`, clone_url: `${web}/${fullName}.git` } };
    }
    const body = (req.body ?? {}) as Record<string, unknown>;
    let g: RegExpMatchArray | null;

    // Octokit sends the ref percent-encoded (heads%2Fmain); GitHub decodes it.
    if (req.method === "GET" && (g = rest.match(/^\/git\/ref\/(.+)$/)) && decodeURIComponent(g[1] as string).startsWith("heads/")) {
      const branch = decodeURIComponent(g[1] as string).slice("heads/".length);
      const sha = r.refs.get(branch);
      if (!sha) throw new HttpError(404, "Not Found", `${docs}/git/refs#get-a-reference`);
      return { status: 200, body: refJson(fullName, branch, sha) };
    }
    if (req.method === "PATCH" && (g = rest.match(/^\/git\/refs\/(.+)$/)) && decodeURIComponent(g[1] as string).startsWith("heads/")) {
      const branch = decodeURIComponent(g[1] as string).slice("heads/".length);
      const doc = `${docs}/git/refs#update-a-reference`;
      const sha = requireString(body, "sha", doc);
      const current = r.refs.get(branch);
      if (!current) throw new HttpError(422, "Reference does not exist", doc);
      if (!r.commits.has(sha)) throw new HttpError(422, "Object does not exist", doc);
      if (body.force !== true && !isAncestor(r, current, sha)) throw new HttpError(422, "Update is not a fast forward", doc);
      r.refs.set(branch, sha);
      return { status: 200, body: refJson(fullName, branch, sha) };
    }
    if (req.method === "GET" && (g = rest.match(/^\/git\/trees\/([0-9a-f]{40})$/))) {
      const entries = r.trees.get(g[1] as string);
      if (!entries) throw new HttpError(404, "Not Found", `${docs}/git/trees#get-a-tree`);
      const recursive = req.query.has("recursive");
      const files = [...entries].filter(([p]) => recursive || !p.includes("/"));
      // A recursive listing also names every folder, as GitHub's does.
      const dirs = recursive ? [...new Set(files.flatMap(([p]) => p.split("/").slice(0, -1).map((_, i, parts) => parts.slice(0, i + 1).join("/"))))] : [...new Set([...entries.keys()].filter((p) => p.includes("/")).map((p) => p.split("/")[0] as string))];
      const tree = [
        ...dirs.map((path) => ({ path, mode: "040000", type: "tree", sha: gitSha("tree", Buffer.from(path)), url: `${api(fullName)}/git/trees/${gitSha("tree", Buffer.from(path))}` })),
        ...files.map(([path, e]) => ({ path, mode: e.mode, type: "blob", sha: e.sha, size: r.blobs.get(e.sha)?.content.length ?? 0, url: `${api(fullName)}/git/blobs/${e.sha}` })),
      ].sort((x, y) => x.path.localeCompare(y.path));
      return { status: 200, body: { sha: g[1], url: `${api(fullName)}/git/trees/${g[1]}`, tree, truncated: false } };
    }
    if (req.method === "GET" && (g = rest.match(/^\/git\/blobs\/([0-9a-f]{40})$/))) {
      const blob = r.blobs.get(g[1] as string);
      if (!blob) throw new HttpError(404, "Not Found", `${docs}/git/blobs#get-a-blob`);
      return {
        status: 200,
        // GitHub wraps base64 content at 60 characters.
        body: { sha: g[1], node_id: `B_${(g[1] as string).slice(0, 12)}`, size: blob.content.length, url: `${api(fullName)}/git/blobs/${g[1]}`, content: `${blob.content.toString("base64").replace(/.{60}/g, "$&\n")}\n`, encoding: "base64" },
      };
    }
    if (req.method === "GET" && (g = rest.match(/^\/git\/commits\/([0-9a-f]{40})$/))) {
      const c = r.commits.get(g[1] as string);
      if (!c) throw new HttpError(404, "Not Found", `${docs}/git/commits#get-a-commit-object`);
      return { status: 200, body: commitJson(fullName, c) };
    }
    if (req.method === "POST" && rest === "/git/blobs") {
      const doc = `${docs}/git/blobs#create-a-blob`;
      const content = requireString(body, "content", doc);
      const encoding = body.encoding ?? "utf-8";
      if (encoding !== "utf-8" && encoding !== "base64") throw new HttpError(422, `encoding must be utf-8 or base64`, doc);
      const sha = putBlob(r, Buffer.from(content, encoding === "base64" ? "base64" : "utf8"));
      return { status: 201, body: { url: `${api(fullName)}/git/blobs/${sha}`, sha } };
    }
    if (req.method === "POST" && rest === "/git/trees") {
      const doc = `${docs}/git/trees#create-a-tree`;
      const baseTree = typeof body.base_tree === "string" ? r.trees.get(body.base_tree) : new Map<string, TreeEntry>();
      if (!baseTree) throw new HttpError(422, "Invalid tree info", doc);
      if (!Array.isArray(body.tree)) throw new HttpError(422, "Invalid request.", doc, [{ resource: "Request", field: "tree", code: "missing_field" }]);
      const entries = new Map(baseTree);
      for (const raw of body.tree as Record<string, unknown>[]) {
        const path = raw.path;
        if (typeof path !== "string" || path.startsWith("/") || path.split("/").includes("..")) throw new HttpError(422, "tree.path contains a malformed path component", doc);
        if (!["100644", "100755", "040000", "160000", "120000"].includes(String(raw.mode))) throw new HttpError(422, "tree.mode is invalid", doc);
        if (raw.sha === null) {
          if (!entries.delete(path)) throw new HttpError(422, `GitRPC::BadObjectState: ${path} does not exist in the base tree`, doc);
        } else if (typeof raw.sha === "string") {
          if (!r.blobs.has(raw.sha)) throw new HttpError(422, "tree.sha is not a valid blob", doc);
          entries.set(path, { mode: String(raw.mode), sha: raw.sha });
        } else if (typeof raw.content === "string") {
          entries.set(path, { mode: String(raw.mode), sha: putBlob(r, Buffer.from(raw.content)) });
        } else throw new HttpError(422, "Must supply either tree.sha or tree.content", doc);
      }
      const sha = putTree(r, entries);
      return {
        status: 201,
        body: { sha, url: `${api(fullName)}/git/trees/${sha}`, truncated: false, tree: [...entries].map(([path, e]) => ({ path, mode: e.mode, type: "blob", sha: e.sha, size: r.blobs.get(e.sha)?.content.length, url: `${api(fullName)}/git/blobs/${e.sha}` })) },
      };
    }
    if (req.method === "POST" && rest === "/git/commits") {
      const doc = `${docs}/git/commits#create-a-commit`;
      const message = requireString(body, "message", doc);
      const tree = requireString(body, "tree", doc);
      if (!r.trees.has(tree)) throw new HttpError(422, "Tree SHA does not exist", doc);
      const parents = Array.isArray(body.parents) ? (body.parents as unknown[]).map(String) : [];
      for (const p of parents) if (!r.commits.has(p)) throw new HttpError(422, "Parent SHA does not exist or is not a commit object", doc);
      return { status: 201, body: commitJson(fullName, putCommit(r, message, tree, parents)) };
    }
    if (req.method === "GET" && rest === "/commits") {
      const ref = req.query.get("sha") ?? "main";
      const tip = r.refs.get(ref) ?? ref;
      if (!r.commits.has(tip)) throw new HttpError(404, `No commit found for SHA: ${ref}`, `${docs}/commits/commits#list-commits`);
      const list = history(r, tip).map((c) => ({
        sha: c.sha,
        node_id: `C_${c.sha.slice(0, 12)}`,
        commit: { author: person(c.date), committer: person(c.date), message: c.message, tree: { sha: c.tree, url: `${api(fullName)}/git/trees/${c.tree}` }, url: `${api(fullName)}/git/commits/${c.sha}`, comment_count: 0 },
        url: `${api(fullName)}/commits/${c.sha}`,
        html_url: `${web}/${fullName}/commit/${c.sha}`,
        author: null,
        committer: null,
        parents: c.parents.map((p) => ({ sha: p, url: `${api(fullName)}/commits/${p}`, html_url: `${web}/${fullName}/commit/${p}` })),
      }));
      return { status: 200, ...paged(req, list) };
    }
    if ((g = rest.match(/^\/issues\/(\d+)\/comments$/))) {
      const issue = Number(g[1]);
      if (!r.pulls.has(issue)) throw new HttpError(404, "Not Found", `${docs}/issues/comments`);
      const list = r.comments.get(issue) ?? [];
      if (req.method === "POST") {
        const c = { id: nextId++, body: requireString(body, "body", `${docs}/issues/comments#create-an-issue-comment`), createdAt: now() };
        r.comments.set(issue, [...list, c]);
        return { status: 201, body: commentJson(fullName, issue, c) };
      }
      if (req.method === "GET") return { status: 200, ...paged(req, list.map((c) => commentJson(fullName, issue, c))) };
    }
    if ((g = rest.match(/^\/pulls\/(\d+)\/reviews$/))) {
      const pull = Number(g[1]);
      if (!r.pulls.has(pull)) throw new HttpError(404, "Not Found", `${docs}/pulls/reviews`);
      const list = r.reviews.get(pull) ?? [];
      if (req.method === "POST") {
        const doc = `${docs}/pulls/reviews#create-a-review-for-a-pull-request`;
        const event = body.event;
        if (event !== "APPROVE" && event !== "COMMENT" && event !== "REQUEST_CHANGES") throw new HttpError(422, "Unprocessable Entity", doc, [`event must be APPROVE, REQUEST_CHANGES or COMMENT`]);
        if (event !== "APPROVE" && !body.body) throw new HttpError(422, "Unprocessable Entity", doc, ["Body is required for this event"]);
        const state = event === "APPROVE" ? "APPROVED" : event === "COMMENT" ? "COMMENTED" : "CHANGES_REQUESTED";
        const rv = { id: nextId++, body: String(body.body ?? ""), state, commitId: [...r.refs.values()][0] ?? "", submittedAt: now() };
        r.reviews.set(pull, [...list, rv]);
        return { status: 200, body: reviewJson(fullName, pull, rv) };
      }
      if (req.method === "GET") return { status: 200, ...paged(req, list.map((rv) => reviewJson(fullName, pull, rv))) };
    }
    if ((g = rest.match(/^\/issues\/(\d+)\/labels(?:\/([^/]+))?$/))) {
      const issue = Number(g[1]);
      if (!r.pulls.has(issue)) throw new HttpError(404, "Not Found", `${docs}/issues/labels`);
      const current = r.issueLabels.get(issue) ?? [];
      if (req.method === "POST" && !g[2]) {
        const doc = `${docs}/issues/labels#add-labels-to-an-issue`;
        // Octokit sends { labels: [...] }; GitHub also takes a bare array.
        const names = Array.isArray(req.body) ? req.body : body.labels;
        if (!Array.isArray(names) || names.some((n) => typeof n !== "string" || n.trim() === "")) {
          throw new HttpError(422, "Invalid request.", doc, [{ resource: "Label", field: "labels", code: "invalid" }]);
        }
        const next = [...current];
        for (const n of names as string[]) {
          const label = labelNamed(r, n);
          if (!next.some((x) => x.toLowerCase() === label.name.toLowerCase())) next.push(label.name);
        }
        r.issueLabels.set(issue, next);
        return { status: 200, body: issueLabelsJson(fullName, r, issue) };
      }
      if (req.method === "DELETE" && g[2]) {
        const name = decodeURIComponent(g[2]);
        const at = current.findIndex((x) => x.toLowerCase() === name.toLowerCase());
        if (at === -1) throw new HttpError(404, "Label does not exist", `${docs}/issues/labels#remove-a-label-from-an-issue`);
        r.issueLabels.set(issue, current.filter((_, i) => i !== at));
        return { status: 200, body: issueLabelsJson(fullName, r, issue) };
      }
      if (req.method === "GET" && !g[2]) return { status: 200, ...paged(req, issueLabelsJson(fullName, r, issue)) };
    }
    if ((g = rest.match(/^\/pulls\/(\d+)\/requested_reviewers$/)) && req.method === "POST") {
      const pull = Number(g[1]);
      const doc = `${docs}/pulls/review-requests#request-reviewers-for-a-pull-request`;
      if (!r.pulls.has(pull)) throw new HttpError(404, "Not Found", doc);
      const reviewers = body.reviewers;
      if (!Array.isArray(reviewers) || reviewers.some((x) => typeof x !== "string")) {
        throw new HttpError(422, "Invalid request.", doc, [{ resource: "Request", field: "reviewers", code: "invalid" }]);
      }
      const next = [...(r.requestedReviewers.get(pull) ?? [])];
      for (const login of reviewers as string[]) if (!next.includes(login)) next.push(login);
      r.requestedReviewers.set(pull, next);
      return {
        status: 201,
        body: {
          id: pull,
          number: pull,
          url: `${api(fullName)}/pulls/${pull}`,
          html_url: `${web}/${fullName}/pull/${pull}`,
          state: "open",
          requested_reviewers: next.map((login, i) => ({ login, id: 5000 + i, node_id: `U_${login}`, type: "User", site_admin: false })),
          requested_teams: [],
          labels: issueLabelsJson(fullName, r, pull),
        },
      };
    }
    if (req.method === "GET" && (g = rest.match(/^\/actions\/jobs\/(\d+)\/logs$/))) {
      // GitHub: "302 Found" with a Location that expires after a minute; 404 for an unknown
      // job; 410 Gone when the logs were deleted (retention, or a person deleted them).
      const doc = `${docs}/actions/workflow-jobs#download-job-logs-for-a-workflow-run`;
      const log = r.jobLogs.get(Number(g[1]));
      if (!log) throw new HttpError(404, "Not Found", doc);
      if (log === "gone") throw new HttpError(410, "Gone", doc);
      const key = createHash("sha256").update(`${fullName}:${g[1]}:${nextId++}`).digest("hex").slice(0, 32);
      signedDownloads.set(key, log);
      return { status: 302, body: null, location: `${blobBase}/_blob/actions-results/${key}/logs/job-logs.txt?sv=2025-01-05&se=2026-11-30T00%3A01%3A00Z&sr=b&sp=r&sig=${key}` };
    }
    if ((g = rest.match(/^\/actions\/jobs\/(\d+)\/rerun$/)) && req.method === "POST") {
      const jobId = Number(g[1]);
      const w = [...r.workflowRuns.values()].find((x) => x.jobs?.some((j) => j.id === jobId));
      if (!w) throw new HttpError(404, "Not Found", `${docs}/actions/workflow-jobs#re-run-a-job-from-a-workflow-run`);
      if (w.status !== "completed") throw new HttpError(403, "This workflow run is not completed", `${docs}/actions/workflow-runs#re-run-a-job-from-a-workflow-run`);
      w.status = "queued";
      w.conclusion = null;
      w.runAttempt += 1;
      return { status: 201, body: {} };
    }
    if ((g = rest.match(/^\/actions\/runs\/(\d+)\/attempts\/(\d+)$/)) && req.method === "GET") {
      // Only the current attempt is kept: an earlier one answers 404 here (GitHub would answer it).
      const w = r.workflowRuns.get(Number(g[1]));
      if (!w || w.runAttempt !== Number(g[2])) throw new HttpError(404, "Not Found", `${docs}/actions/workflow-runs#get-a-workflow-run-attempt`);
      return { status: 200, body: runJson(fullName, w) };
    }
    if ((g = rest.match(/^\/actions\/runs\/(\d+)\/rerun-failed-jobs$/)) && req.method === "POST") {
      const w = r.workflowRuns.get(Number(g[1]));
      if (!w) throw new HttpError(404, "Not Found", `${docs}/actions/workflow-runs`);
      if (w.status !== "completed") throw new HttpError(403, "This workflow run is not completed", `${docs}/actions/workflow-runs#re-run-failed-jobs-from-a-workflow-run`);
      if (w.conclusion === "success") throw new HttpError(403, "This workflow run has no failed jobs", `${docs}/actions/workflow-runs#re-run-failed-jobs-from-a-workflow-run`);
      w.status = "queued";
      w.conclusion = null;
      w.runAttempt += 1;
      return { status: 201, body: {} };
    }
    if (req.method === "GET" && (g = rest.match(/^\/collaborators\/([^/]+)\/permission$/))) {
      // GET /repos/{owner}/{repo}/collaborators/{username}/permission: "permission" is the legacy
      // level (maintain reads as write, triage as read), "role_name" the role.
      const login = decodeURIComponent(g[1] as string);
      const role = r.collaborators.get(login.toLowerCase()) ?? (r.private ? null : "read");
      if (!role) throw new HttpError(404, "Not Found", `${docs}/collaborators/collaborators#get-repository-permissions-for-a-user`);
      const permission = role === "maintain" ? "write" : role === "triage" ? "read" : role;
      return { status: 200, body: { permission, role_name: role, user: { login, id: 1, node_id: `U_${login}`, type: "User", site_admin: false, permissions: { admin: role === "admin", maintain: ["admin", "maintain"].includes(role), push: permission !== "read", triage: role !== "read", pull: true }, role_name: role } } };
    }
    if (req.method === "POST" && rest === "/git/refs") {
      const doc = `${docs}/git/refs#create-a-reference`;
      const ref = requireString(body, "ref", doc);
      const sha = requireString(body, "sha", doc);
      if (!r.commits.has(sha)) throw new HttpError(422, "Object does not exist", doc);
      const branch = ref.startsWith("refs/heads/") ? ref.slice("refs/heads/".length) : null;
      const tag = ref.startsWith("refs/tags/") ? ref.slice("refs/tags/".length) : null;
      if (branch === null && tag === null) throw new HttpError(422, "Reference name is invalid", doc);
      if (branch !== null ? r.refs.has(branch) : r.tags.has(tag as string)) throw new HttpError(422, "Reference already exists", doc);
      if (branch !== null) r.refs.set(branch, sha);
      else r.tags.set(tag as string, sha);
      return { status: 201, body: branch !== null ? refJson(fullName, branch, sha) : { ref, node_id: `REF_${tag}`, url: `${api(fullName)}/git/${ref}`, object: { sha, type: "commit", url: `${api(fullName)}/git/commits/${sha}` } } };
    }
    if (rest === "/pulls") {
      const doc = `${docs}/pulls/pulls`;
      if (req.method === "GET") {
        const head = req.query.get("head");
        const state = req.query.get("state") ?? "open";
        const list = [...r.openedPulls.values()].filter((p) => (!head || `${fullName.split("/")[0]}:${p.head}` === head) && (state === "all" || p.state === state)).sort((a, b) => b.number - a.number);
        return { status: 200, ...paged(req, list.map((p) => pullJson(fullName, p))) };
      }
      if (req.method === "POST") {
        const title = requireString(body, "title", doc);
        const head = requireString(body, "head", doc);
        const baseRef = requireString(body, "base", doc);
        const headSha = r.refs.get(head);
        if (!headSha || !r.refs.has(baseRef)) throw new HttpError(422, "Validation Failed", doc, [{ resource: "PullRequest", field: headSha ? "base" : "head", code: "invalid" }]);
        if ([...r.openedPulls.values()].some((p) => p.head === head && p.state === "open")) throw new HttpError(422, "Validation Failed", doc, [{ resource: "PullRequest", code: "custom", message: `A pull request already exists for ${fullName.split("/")[0]}:${head}.` }]);
        const number = Math.max(0, ...r.pulls, ...r.openedPulls.keys()) + 1;
        const p: FakePull = { number, title, body: typeof body.body === "string" ? body.body : "", head, base: baseRef, headSha, state: "open" };
        r.openedPulls.set(number, p);
        r.pulls.add(number);
        return { status: 201, body: pullJson(fullName, p) };
      }
    }
    if (req.method === "GET" && (g = rest.match(/^\/releases\/tags\/(.+)$/))) {
      const tag = decodeURIComponent(g[1] as string);
      const rel = r.releases.find((x) => x.tagName === tag);
      if (!rel) throw new HttpError(404, "Not Found", `${docs}/releases/releases#get-a-release-by-tag-name`);
      return { status: 200, body: releaseJson(fullName, rel) };
    }
    if (req.method === "POST" && rest === "/releases") {
      const doc = `${docs}/releases/releases#create-a-release`;
      const tagName = requireString(body, "tag_name", doc);
      if (r.releases.some((x) => x.tagName === tagName)) throw new HttpError(422, "Validation Failed", doc, [{ resource: "Release", code: "already_exists", field: "tag_name" }]);
      const target = typeof body.target_commitish === "string" ? body.target_commitish : r.defaultBranch;
      const sha = r.refs.get(target) ?? (r.commits.has(target) ? target : null);
      if (!r.tags.has(tagName)) {
        if (!sha) throw new HttpError(422, "Validation Failed", doc, [{ resource: "Release", code: "invalid", field: "target_commitish" }]);
        r.tags.set(tagName, sha);
      }
      const rel: FakeRelease = { id: nextId++, tagName, name: typeof body.name === "string" ? body.name : tagName, body: typeof body.body === "string" ? body.body : "", targetCommitish: target, assets: [] };
      r.releases.push(rel);
      return { status: 201, body: releaseJson(fullName, rel) };
    }
    if (req.method === "POST" && (g = rest.match(/^\/releases\/(\d+)\/assets$/))) {
      const rel = r.releases.find((x) => x.id === Number(g?.[1]));
      const doc = `${docs}/releases/assets#upload-a-release-asset`;
      if (!rel) throw new HttpError(404, "Not Found", doc);
      const name = req.query.get("name");
      const raw = (body as { raw?: Buffer }).raw;
      if (!name || !raw) throw new HttpError(422, "Validation Failed", doc, [{ resource: "ReleaseAsset", code: "missing_field", field: name ? "body" : "name" }]);
      if (rel.assets.some((a) => a.name === name)) throw new HttpError(422, "Validation Failed", doc, [{ resource: "ReleaseAsset", code: "already_exists", field: "name" }]);
      const asset = { id: nextId++, name, content: raw };
      rel.assets.push(asset);
      return { status: 201, body: assetJson(fullName, asset) };
    }
    const checked = checks.route({ method: req.method, rest, fullName, query: req.query, body: req.body, authorization: req.authorization }, r);
    if (checked) return checked;
    if ((g = rest.match(/^\/actions\/runs\/(\d+)(\/rerun)?$/))) {
      const w = r.workflowRuns.get(Number(g[1]));
      if (!w) throw new HttpError(404, "Not Found", `${docs}/actions/workflow-runs`);
      if (req.method === "GET" && !g[2]) return { status: 200, body: runJson(fullName, w) };
      if (req.method === "POST" && g[2]) {
        if (w.status !== "completed") throw new HttpError(403, "This workflow run is not completed", `${docs}/actions/workflow-runs#re-run-a-workflow`);
        w.status = "queued";
        w.conclusion = null;
        w.runAttempt += 1;
        return { status: 201, body: {} };
      }
    }
    throw new HttpError(404, "Not Found", docs);
  }

  async function readBody(req: IncomingMessage): Promise<unknown> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const raw = Buffer.concat(chunks);
    // A release asset upload is raw bytes, not JSON.
    if (req.headers["content-type"] && !String(req.headers["content-type"]).includes("json")) return { raw };
    const text = raw.toString("utf8");
    if (!text) return undefined;
    try {
      return JSON.parse(text);
    } catch {
      throw new HttpError(400, "Problems parsing JSON", docs);
    }
  }

  function send(res: ServerResponse, status: number, body: unknown, link?: string, headers: Record<string, string> = {}) {
    const text = JSON.stringify(body);
    res.writeHead(status, {
      "content-type": "application/json; charset=utf-8",
      "x-github-media-type": "github.v3; format=json",
      "x-ratelimit-limit": "5000",
      "x-ratelimit-remaining": "4999",
      "x-github-request-id": `FAKE:${nextId++}`,
      ...(link ? { link } : {}),
      ...headers,
    });
    res.end(text);
  }

  const handle = (req: IncomingMessage, res: ServerResponse) => {
    void (async () => {
      try {
        const url = new URL(req.url ?? "/", "http://fake.invalid");
        const recorded: RecordedRequest = { method: req.method ?? "GET", path: url.pathname, query: url.searchParams, body: await readBody(req), authorization: req.headers.authorization };
        const blob = recorded.path.match(/^\/_blob\/actions-results\/([0-9a-f]{32})\/logs\/job-logs\.txt$/);
        const onBlobHost = req.socket.localPort === blobPort;
        if (onBlobHost && !blob) {
          res.writeHead(400, { "content-type": "application/xml" });
          return res.end(`<?xml version="1.0" encoding="utf-8"?><Error><Code>InvalidUri</Code></Error>`);
        }
        if (blob && onBlobHost) {
          // The storage host: the signed URL is the credential; an expired or unknown one is 403 (Azure's AuthenticationFailed).
          downloads.push(recorded);
          const bytes = signedDownloads.get(blob[1] as string);
          if (!bytes || recorded.query.get("sig") !== blob[1]) {
            res.writeHead(403, { "content-type": "application/xml" });
            return res.end(`<?xml version="1.0" encoding="utf-8"?><Error><Code>AuthenticationFailed</Code></Error>`);
          }
          res.writeHead(200, { "content-type": "text/plain", "content-length": String(bytes.length) });
          // Streamed in 64 KiB pieces, as a large log arrives.
          for (let at = 0; at < bytes.length && !res.destroyed; at += 64 * 1024) {
            if (!res.write(bytes.subarray(at, at + 64 * 1024))) {
              await new Promise<void>((done) => {
                const go = () => (res.off("drain", go), res.off("close", go), done());
                res.on("drain", go).on("close", go);
              });
            }
          }
          return res.end();
        }
        requests.push(recorded);
        if (limited && limited.times > 0) {
          limited.times--;
          const l = limited;
          if (l.kind === "secondary") {
            return send(res, l.status, { message: "You have exceeded a secondary rate limit. Please wait a few minutes before you try again.", documentation_url: `${docs}/overview/rate-limits-for-the-rest-api`, status: String(l.status) }, undefined, { "retry-after": String(l.retryAfterSeconds) });
          }
          const reset = Math.ceil(Date.now() / 1000) + l.retryAfterSeconds;
          return send(res, l.status, { message: "API rate limit exceeded for installation.", documentation_url: `${docs}/overview/rate-limits-for-the-rest-api`, status: String(l.status) }, undefined, { "x-ratelimit-remaining": "0", "x-ratelimit-reset": String(reset) });
        }
        const appRoute = apps.route(recorded);
        if (appRoute) return send(res, appRoute.status, appRoute.body);
        const auth = req.headers.authorization ?? "";
        const repoName = recorded.path.match(/^\/repos\/([^/]+\/[^/]+)(?:\/|$)/)?.[1] ?? null;
        const installation = apps.tokenAllows(auth, repoName);
        if (installation === "bad_credentials") throw new HttpError(401, "Bad credentials", docs);
        // An installation token sees only its repositories: others answer 404, as on GitHub.
        if (installation === "not_in_scope") throw new HttpError(404, "Not Found", `${docs}/repos/repos#get-a-repository`);
        if (installation === "no_token" && auth !== `token ${token}` && auth !== `bearer ${token}` && auth !== `Bearer ${token}`) throw new HttpError(401, "Bad credentials", docs);
        const injected = await interceptor?.(recorded);
        if (injected?.location) {
          res.writeHead(injected.status, { location: injected.location, "content-length": "0" });
          return res.end();
        }
        if (injected) return send(res, injected.status, injected.body);
        const out = await route(recorded);
        if (out.location) {
          res.writeHead(out.status, { location: out.location, "content-length": "0", "x-github-request-id": `FAKE:${nextId++}` });
          return res.end();
        }
        send(res, out.status, out.body, out.link);
      } catch (err) {
        if (err instanceof AppHttpError) return send(res, err.status, { message: err.message, documentation_url: err.doc, status: String(err.status) });
        if (err instanceof ChecksHttpError) return send(res, err.status, { message: err.message, ...(err.errors ? { errors: err.errors } : {}), documentation_url: err.doc, status: String(err.status) });
        if (err instanceof HttpError) return send(res, err.status, { message: err.message, ...(err.errors ? { errors: err.errors } : {}), documentation_url: err.doc, status: String(err.status) });
        send(res, 500, { message: String(err) });
      }
    })();
  };
  const server: Server = createServer(handle);
  const blobServer: Server = createServer(handle);
  await new Promise<void>((resolveListen) => server.listen(0, "127.0.0.1", resolveListen));
  await new Promise<void>((resolveListen) => blobServer.listen(0, "127.0.0.1", resolveListen));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const blobPort = (blobServer.address() as AddressInfo).port;
  blobBase = `http://127.0.0.1:${blobPort}`;

  const filesOf = (r: FakeRepo, commitSha: string) => {
    const tree = r.trees.get((r.commits.get(commitSha) as Commit).tree) as Map<string, TreeEntry>;
    return Object.fromEntries([...tree].map(([p, e]) => [p, (r.blobs.get(e.sha) as Blob).content.toString("utf8")]));
  };

  return {
    url: base,
    blobUrl: blobBase,
    token,
    requests,
    apps,
    checks,
    rateLimit(injection) {
      limited = { ...injection };
    },
    createRepository(fullName, o) {
      const r: FakeRepo = {
        defaultBranch: o.branch,
        private: o.private ?? true,
        refs: new Map(),
        blobs: new Map(),
        trees: new Map(),
        commits: new Map(),
        comments: new Map(),
        reviews: new Map(),
        pulls: new Set(o.pulls ?? []),
        workflowRuns: new Map(),
        labels: new Map(),
        issueLabels: new Map(),
        requestedReviewers: new Map(),
        jobLogs: new Map(),
        collaborators: new Map(),
        openedPulls: new Map(),
        tags: new Map(),
        releases: [],
      };
      repos.set(fullName, r);
      const c = putCommit(r, "Initial commit\n", treeOf(r, o.files, undefined, o.executable), []);
      r.refs.set(o.branch, c.sha);
      return { headSha: c.sha };
    },
    pushCommit(fullName, branch, files, message) {
      const r = getRepo(fullName);
      const tip = r.refs.get(branch) as string;
      const c = putCommit(r, message, treeOf(r, files, r.trees.get((r.commits.get(tip) as Commit).tree)), [tip]);
      r.refs.set(branch, c.sha);
      return c.sha;
    },
    addWorkflowRun(fullName, run) {
      getRepo(fullName).workflowRuns.set(run.id, { runAttempt: 1, ...run });
    },
    setJobLog(fullName, jobId, log) {
      getRepo(fullName).jobLogs.set(jobId, log === "gone" ? "gone" : Buffer.from(log));
    },
    downloads,
    setCollaborator(fullName, login, role) {
      getRepo(fullName).collaborators.set(login.toLowerCase(), role);
    },
    labelsOn: (fullName, issue) => [...(getRepo(fullName).issueLabels.get(issue) ?? [])],
    setIssueLabels(fullName, issue, labels) {
      const r = getRepo(fullName);
      r.issueLabels.set(issue, labels.map((n) => labelNamed(r, n).name));
    },
    repo: getRepo,
    filesAt(fullName, branch) {
      const r = getRepo(fullName);
      return filesOf(r, r.refs.get(branch) as string);
    },
    modeAt(fullName, branch, path) {
      const r = getRepo(fullName);
      return r.trees.get((r.commits.get(r.refs.get(branch) as string) as Commit).tree)?.get(path)?.mode;
    },
    branchHead: (fullName, branch) => getRepo(fullName).refs.get(branch),
    commit: (fullName, sha) => getRepo(fullName).commits.get(sha),
    history(fullName, branch) {
      const r = getRepo(fullName);
      return history(r, r.refs.get(branch) as string);
    },
    intercept(fn) {
      interceptor = fn;
    },
    close: () => Promise.all([server, blobServer].map((s) => new Promise<void>((done) => s.close(() => done())))).then(() => undefined),
  };
}
