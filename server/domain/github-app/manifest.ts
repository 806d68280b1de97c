// The GitHub App Airlock asks GitHub to create (the app-manifest flow), with the least permissions
// its features need. The README lists the same table; a test keeps them in step.

/** Repository permissions, each with the feature that needs it. `metadata: read` GitHub always grants. */
export const APP_PERMISSIONS = {
  metadata: { level: "read", why: "repository names, default branch, visibility" },
  contents: { level: "write", why: "read files for path filters; push an approved patch's commit" },
  pull_requests: { level: "write", why: "read a PR's changed files; open or update a PR; review requests" },
  issues: { level: "write", why: "comments on PRs (they are issue comments) and labels" },
  checks: { level: "write", why: "read failed check runs; Airlock's own check run with its requested actions" },
  actions: { level: "write", why: "read job logs; rerun a workflow after a write-back" },
} as const;

/** Webhook events the app subscribes to (installation events come to every app unasked). */
export const APP_EVENTS = ["check_run", "check_suite", "workflow_run", "workflow_job", "issue_comment", "pull_request", "pull_request_review", "push", "release"] as const;

export type AppManifest = {
  name: string;
  url: string;
  hook_attributes: { url: string; active: boolean };
  redirect_url: string;
  setup_url: string;
  setup_on_update: boolean;
  public: boolean;
  default_permissions: Record<string, string>;
  default_events: string[];
};

export function buildManifest(opts: { airlockUrl: string; name: string }): AppManifest {
  const root = opts.airlockUrl.replace(/\/+$/, "");
  return {
    name: opts.name,
    url: root,
    hook_attributes: { url: `${root}/api/webhooks/github`, active: true },
    redirect_url: `${root}/api/github/app/manifest`,
    setup_url: `${root}/settings/github`,
    setup_on_update: true,
    public: false,
    default_permissions: Object.fromEntries(Object.entries(APP_PERMISSIONS).map(([k, v]) => [k, v.level])),
    default_events: [...APP_EVENTS],
  };
}

/** Where the browser posts the manifest: a personal account's or an organisation's new-app page. */
export function manifestPostUrl(opts: { githubUrl: string; organization: string | null; state: string }): string {
  const root = opts.githubUrl.replace(/\/+$/, "");
  const path = opts.organization ? `/organizations/${encodeURIComponent(opts.organization)}/settings/apps/new` : "/settings/apps/new";
  return `${root}${path}?state=${encodeURIComponent(opts.state)}`;
}
