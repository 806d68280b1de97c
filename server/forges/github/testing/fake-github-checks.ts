import type { FakeApps } from "./fake-github-apps";

// The Checks half of the GitHub API test double (fake-github.ts serves it): create, update and
// get a check run (POST /repos/{owner}/{repo}/check-runs, PATCH and GET .../check-runs/{id}),
// with GitHub's rules: only a GitHub App's installation token may write check runs, only the app
// that created a run may update it, `head_sha` must be a commit of the repository, a completed
// run needs a conclusion (`action_required` also a details_url), at most three actions whose
// label and identifier are at most 20 characters and description at most 40, an output summary
// of at most 65,535 characters. The JSON is the REST API's `check-run` schema, which is also what
// a check_run webhook carries (checkRunJson feeds the requested_action fixture).

const docs = "https://docs.github.com/rest/checks/runs";

export type CheckRunAction = { label: string; description: string; identifier: string };

export type FakeCheckRun = {
  id: number;
  fullName: string;
  appId: number;
  name: string;
  headSha: string;
  externalId: string;
  detailsUrl: string | null;
  status: "queued" | "in_progress" | "completed";
  conclusion: string | null;
  startedAt: string;
  completedAt: string | null;
  output: { title: string | null; summary: string | null; text: string | null };
  actions: CheckRunAction[];
  /** Every write, in order (what a test reads to see each state was written once). */
  history: { method: "POST" | "PATCH"; status: string; conclusion: string | null }[];
};

export class ChecksHttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly doc: string,
    readonly errors?: unknown[],
  ) {
    super(message);
  }
}

const STATUSES = ["queued", "in_progress", "completed"] as const;
const CONCLUSIONS = ["action_required", "cancelled", "failure", "neutral", "success", "skipped", "stale", "timed_out"] as const;

export type FakeChecks = {
  route(req: { method: string; rest: string; fullName: string; query: URLSearchParams; body: unknown; authorization: string | undefined }, repo: { commits: Map<string, unknown> }): { status: number; body: unknown } | null;
  get(id: number): FakeCheckRun | undefined;
  all(fullName: string): FakeCheckRun[];
  /** The check run as GitHub's API and webhooks show it. */
  json(id: number): Record<string, unknown>;
};

export function createFakeChecks(opts: { apps: FakeApps; base: () => string; web: string; now: () => string; nextId: () => number }): FakeChecks {
  const runs = new Map<number, FakeCheckRun>();
  const invalid = (doc: string, field: string, message = "Invalid request.") => new ChecksHttpError(422, message, doc, [{ resource: "CheckRun", field, code: "invalid" }]);

  function validate(body: Record<string, unknown>, doc: string, creating: boolean) {
    if (creating && (typeof body.name !== "string" || body.name === "")) throw invalid(doc, "name", "Invalid request.\n\n\"name\" wasn't supplied.");
    if (body.status !== undefined && !(STATUSES as readonly unknown[]).includes(body.status)) throw invalid(doc, "status");
    if (body.conclusion !== undefined && body.conclusion !== null && !(CONCLUSIONS as readonly unknown[]).includes(body.conclusion)) throw invalid(doc, "conclusion");
    if (body.actions !== undefined) {
      if (!Array.isArray(body.actions) || body.actions.length > 3) throw invalid(doc, "actions", "Invalid request.\n\nNo more than 3 actions are allowed.");
      for (const a of body.actions as Record<string, unknown>[]) {
        if (typeof a.label !== "string" || a.label.length === 0 || a.label.length > 20) throw invalid(doc, "actions.label", "Invalid request.\n\nlabel is too long (maximum is 20 characters)");
        if (typeof a.identifier !== "string" || a.identifier.length === 0 || a.identifier.length > 20) throw invalid(doc, "actions.identifier", "Invalid request.\n\nidentifier is too long (maximum is 20 characters)");
        if (typeof a.description !== "string" || a.description.length === 0 || a.description.length > 40) throw invalid(doc, "actions.description", "Invalid request.\n\ndescription is too long (maximum is 40 characters)");
      }
    }
    const output = body.output as Record<string, unknown> | undefined;
    if (output !== undefined) {
      if (typeof output.title !== "string" || typeof output.summary !== "string") throw invalid(doc, "output", "Invalid request.\n\n\"title\", \"summary\" weren't supplied.");
      if (output.summary.length > 65_535) throw invalid(doc, "output.summary", "Invalid request.\n\nsummary is too long (maximum is 65535 characters)");
      if (typeof output.text === "string" && output.text.length > 65_535) throw invalid(doc, "output.text");
    }
    if (body.details_url !== undefined && body.details_url !== null && (typeof body.details_url !== "string" || !/^https?:\/\//.test(body.details_url))) throw invalid(doc, "details_url");
  }

  function settle(run: FakeCheckRun, body: Record<string, unknown>, doc: string) {
    if (typeof body.name === "string") run.name = body.name;
    if (typeof body.external_id === "string") run.externalId = body.external_id;
    if (typeof body.details_url === "string") run.detailsUrl = body.details_url;
    if (body.output) {
      const o = body.output as Record<string, unknown>;
      run.output = { title: String(o.title), summary: String(o.summary), text: typeof o.text === "string" ? o.text : null };
    }
    if (Array.isArray(body.actions)) run.actions = (body.actions as CheckRunAction[]).map((a) => ({ label: a.label, description: a.description, identifier: a.identifier }));
    // A conclusion completes the run; GitHub then sets status "completed" itself.
    if (typeof body.conclusion === "string") {
      run.status = "completed";
      run.conclusion = body.conclusion;
      run.completedAt = typeof body.completed_at === "string" ? body.completed_at : opts.now();
    } else if (typeof body.status === "string") {
      if (body.status === "completed") throw new ChecksHttpError(422, "Invalid request.\n\n\"conclusion\" wasn't supplied.", doc, [{ resource: "CheckRun", field: "conclusion", code: "missing_field" }]);
      run.status = body.status as FakeCheckRun["status"];
      run.conclusion = null;
      run.completedAt = null;
    }
    if (run.conclusion === "action_required" && !run.detailsUrl) throw invalid(doc, "details_url", "Invalid request.\n\n\"details_url\" wasn't supplied.");
  }

  function json(id: number): Record<string, unknown> {
    const run = runs.get(id);
    if (!run) throw new Error(`no check run ${id}`);
    const api = `${opts.base()}/repos/${run.fullName}`;
    const app = opts.apps.app(run.appId);
    return {
      id: run.id,
      name: run.name,
      node_id: `CR_${run.id}`,
      head_sha: run.headSha,
      external_id: run.externalId,
      url: `${api}/check-runs/${run.id}`,
      html_url: `${opts.web}/${run.fullName}/runs/${run.id}`,
      details_url: run.detailsUrl,
      status: run.status,
      conclusion: run.conclusion,
      started_at: run.startedAt,
      completed_at: run.completedAt,
      output: { ...run.output, annotations_count: 0, annotations_url: `${api}/check-runs/${run.id}/annotations` },
      check_suite: { id: 700_000 + run.id },
      app: app ? { id: app.id, slug: app.slug, node_id: `A_${app.id}`, name: app.name, owner: { login: app.owner, id: 1, type: "Organization" } } : null,
      pull_requests: [],
    };
  }

  return {
    get: (id) => runs.get(id),
    all: (fullName) => [...runs.values()].filter((r) => r.fullName === fullName),
    json,
    route(req, repo) {
      const forRef = req.method === "GET" ? req.rest.match(/^\/commits\/([^/]+)\/check-runs$/) : null;
      if (forRef) {
        // GET /repos/{owner}/{repo}/commits/{ref}/check-runs (a SHA here), filtered by check_name and app_id.
        const query = req.query;
        const list = [...runs.values()].filter(
          (r) => r.fullName === req.fullName && r.headSha === forRef[1] && (!query.get("check_name") || r.name === query.get("check_name")) && (!query.get("app_id") || String(r.appId) === query.get("app_id")),
        );
        return { status: 200, body: { total_count: list.length, check_runs: list.map((r) => json(r.id)) } };
      }
      const isCreate = req.method === "POST" && req.rest === "/check-runs";
      const one = req.rest.match(/^\/check-runs\/(\d+)$/);
      if (!isCreate && !one) return null;
      const body = (req.body ?? {}) as Record<string, unknown>;
      const installation = opts.apps.installationOf(req.authorization);
      if (isCreate) {
        const doc = `${docs}#create-a-check-run`;
        if (!installation) throw new ChecksHttpError(403, "You must authenticate via a GitHub App.", doc);
        validate(body, doc, true);
        if (typeof body.head_sha !== "string" || !repo.commits.has(body.head_sha)) throw new ChecksHttpError(422, "No commit found for SHA: " + String(body.head_sha ?? ""), doc);
        const run: FakeCheckRun = {
          id: opts.nextId(),
          fullName: req.fullName,
          appId: installation.appId,
          name: body.name as string,
          headSha: body.head_sha,
          externalId: "",
          detailsUrl: null,
          status: "queued",
          conclusion: null,
          startedAt: typeof body.started_at === "string" ? body.started_at : opts.now(),
          completedAt: null,
          output: { title: null, summary: null, text: null },
          actions: [],
          history: [],
        };
        settle(run, body, doc);
        runs.set(run.id, run);
        run.history.push({ method: "POST", status: run.status, conclusion: run.conclusion });
        return { status: 201, body: json(run.id) };
      }
      const run = runs.get(Number((one as RegExpMatchArray)[1]));
      if (!run || run.fullName !== req.fullName) throw new ChecksHttpError(404, "Not Found", `${docs}#get-a-check-run`);
      if (req.method === "GET") return { status: 200, body: json(run.id) };
      if (req.method === "PATCH") {
        const doc = `${docs}#update-a-check-run`;
        if (!installation) throw new ChecksHttpError(403, "You must authenticate via a GitHub App.", doc);
        if (installation.appId !== run.appId) throw new ChecksHttpError(403, "Invalid app_id `" + installation.appId + "` - check run can only be modified by the GitHub App that created it.", doc);
        validate(body, doc, false);
        settle(run, body, doc);
        run.history.push({ method: "PATCH", status: run.status, conclusion: run.conclusion });
        return { status: 200, body: json(run.id) };
      }
      return null;
    },
  };
}
