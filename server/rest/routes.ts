// The REST API's routes (/api/v1): each names the tRPC procedure it calls, so its input schema,
// its permission checks and its domain call are the procedure's own (one place per concept).
// Paths are OpenAPI templates; `{name}` segments become input fields of the same name. GET
// routes take the rest of the input from the query string, POST and PUT from a JSON body.
// `handler` routes are the few that are not a procedure call (SSE, exports); they document
// their own parameters.

export type RestMethod = "GET" | "POST" | "PUT";

export type RestRoute = {
  method: RestMethod;
  path: string;
  summary: string;
  tag: "runs" | "events" | "approvals" | "stacks" | "triggers" | "deliveries" | "tokens";
  /** The procedure's path in the app router. */
  procedure?: string;
  /** A custom handler's name (server/rest/custom.ts). */
  handler?: "eventStream" | "transcriptJsonl" | "transcriptMarkdown" | "whoami";
  /** What a custom handler answers (its media type and description). */
  produces?: { type: string; description: string };
  query?: { name: string; description: string; schema: Record<string, unknown> }[];
};

export const restRoutes: RestRoute[] = [
  { method: "GET", path: "/whoami", summary: "The token's owner, kind, role and repositories", tag: "tokens", handler: "whoami", produces: { type: "application/json", description: "The caller" } },

  { method: "GET", path: "/runs", summary: "List runs, newest first (keyset pages: pass `cursor` from the last page)", tag: "runs", procedure: "runs.list" },
  { method: "GET", path: "/runs/{runId}", summary: "Show a run", tag: "runs", procedure: "runs.byId" },
  { method: "POST", path: "/runs/{runId}/cancel", summary: "Cancel a run", tag: "runs", procedure: "runs.cancel" },
  { method: "POST", path: "/runs/{runId}/retry", summary: "Retry a failed, cancelled or escalated run", tag: "runs", procedure: "runs.retry" },
  { method: "POST", path: "/runs/{runId}/dispatch", summary: "Dispatch a suggested run", tag: "runs", procedure: "runs.dispatch" },

  { method: "GET", path: "/runs/{runId}/events", summary: "A page of a run's events (afterSeq / beforeSeq, at most 1000)", tag: "events", procedure: "runs.events" },
  {
    method: "GET",
    path: "/runs/{runId}/events/stream",
    summary: "A run's events as server-sent events: the backlog, then live events; each frame has `id: <seq>`, resume with Last-Event-ID",
    tag: "events",
    handler: "eventStream",
    produces: { type: "text/event-stream", description: "Server-sent events" },
  },
  {
    method: "GET",
    path: "/runs/{runId}/transcript.jsonl",
    summary: "Export a run's events as JSON lines, one event a line, in seq order",
    tag: "events",
    handler: "transcriptJsonl",
    produces: { type: "application/x-ndjson", description: "JSON lines" },
  },
  {
    method: "GET",
    path: "/runs/{runId}/transcript.md",
    summary: "Export a run's transcript as Markdown",
    tag: "events",
    handler: "transcriptMarkdown",
    produces: { type: "text/markdown", description: "Markdown" },
  },

  { method: "GET", path: "/approvals", summary: "List approval requests", tag: "approvals", procedure: "approvals.list" },
  { method: "GET", path: "/approvals/{approvalId}", summary: "Show an approval request with what the approver is shown", tag: "approvals", procedure: "approvals.byId" },
  {
    method: "POST",
    path: "/approvals/{approvalId}/approve",
    summary: "Approve a write-back: `artifactDigest` (and `headSha`) must be the ones you reviewed, or it is refused",
    tag: "approvals",
    procedure: "approvals.approve",
  },
  { method: "POST", path: "/approvals/{approvalId}/reject", summary: "Reject a write-back with a reason", tag: "approvals", procedure: "approvals.reject" },

  { method: "GET", path: "/stacks/export", summary: "Every stack (not archived) as a file: name, description, spec", tag: "stacks", procedure: "configFiles.exportStacks" },
  { method: "POST", path: "/stacks/apply", summary: "Plan (`dryRun`, the default) or apply a stacks file; unchanged stacks are not saved", tag: "stacks", procedure: "configFiles.applyStacks" },
  { method: "GET", path: "/stacks", summary: "List agent stacks", tag: "stacks", procedure: "stacks.list" },
  { method: "GET", path: "/stacks/{stackId}", summary: "Show a stack with its current spec", tag: "stacks", procedure: "stacks.byId" },
  { method: "POST", path: "/stacks", summary: "Create a stack", tag: "stacks", procedure: "stacks.create" },
  { method: "PUT", path: "/stacks/{stackId}", summary: "Save a new version of a stack (`expectedVersion` guards against lost updates)", tag: "stacks", procedure: "stacks.update" },

  { method: "GET", path: "/triggers/export", summary: "The trigger rules you can see as a file", tag: "triggers", procedure: "configFiles.exportTriggers" },
  { method: "POST", path: "/triggers/apply", summary: "Plan (`dryRun`, the default) or apply a trigger-rules file; unchanged rules are not saved", tag: "triggers", procedure: "configFiles.applyTriggers" },
  { method: "GET", path: "/triggers", summary: "List trigger rules", tag: "triggers", procedure: "triggers.list" },
  { method: "GET", path: "/deliveries", summary: "List recorded webhook deliveries of the repositories you can see, newest first (filters: outcome, event, repository, delivery; keyset pages)", tag: "deliveries", procedure: "deliveries.list" },
  { method: "POST", path: "/deliveries/{deliveryId}/reevaluate", summary: "Evaluate a delivery again (Airlock admins; idempotent: the dedupe keys turn a repeat into a duplicate)", tag: "deliveries", procedure: "deliveries.reevaluate" },
  { method: "GET", path: "/triggers/{ruleId}", summary: "Show a trigger rule", tag: "triggers", procedure: "triggers.byId" },
  { method: "POST", path: "/triggers", summary: "Create a trigger rule", tag: "triggers", procedure: "triggers.create" },
  { method: "PUT", path: "/triggers/{ruleId}", summary: "Change a trigger rule (`expectedVersion` guards against lost updates)", tag: "triggers", procedure: "triggers.update" },
];

export const pathParams = (path: string) => [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]!);

/** The route and its path parameters for a method and a path under /api/v1, or null. */
export function matchRoute(method: string, path: string): { route: RestRoute; params: Record<string, string> } | { allowed: RestMethod[] } | null {
  const allowed: RestMethod[] = [];
  for (const route of restRoutes) {
    const names = pathParams(route.path);
    const pattern = new RegExp(`^${route.path.replace(/\./g, "\\.").replace(/\{\w+\}/g, "([^/]+)")}$`);
    const m = pattern.exec(path);
    if (!m) continue;
    if (route.method !== method) {
      allowed.push(route.method);
      continue;
    }
    const params: Record<string, string> = {};
    try {
      names.forEach((name, i) => (params[name] = decodeURIComponent(m[i + 1]!)));
    } catch {
      return null;
    }
    return { route, params };
  }
  return allowed.length > 0 ? { allowed } : null;
}
