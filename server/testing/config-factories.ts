// Factories for the configuration forms' integration tests: stacks and rules through the real
// services, failing checks through the real ingest path, and the tRPC error shape the browser
// receives (the real formatter, through the fetch adapter).
import { createHash, randomBytes } from "node:crypto";
import { fetchRequestHandler } from "@trpc/server/adapters/fetch";
import type { PrismaClient } from "@/server/db";
import type { SessionUser } from "@/server/auth/roles";
import type { FailedCheckEvent } from "@/server/domain/ci-events/ci-event";
import { ingestCiEvent } from "@/server/domain/ingest/delivery/ingest-ci-event";
import { evaluateDelivery } from "@/server/domain/evaluation/evaluate";
import type { StackFormValues } from "@/server/domain/stacks/schemas";
import { createStack } from "@/server/domain/stacks/stacks-service";
import type { StackSpec } from "@/server/domain/stacks/spec";
import { createTriggerRule } from "@/server/domain/triggers/rules-service";
import type { TriggerRuleFormValues } from "@/server/domain/triggers/forms/schemas";
import { appRouter } from "@/server/trpc/root";
import { createTRPCContext } from "@/server/trpc/init";

export const uid = () => randomBytes(4).toString("hex");
export const sha = (label: string) => createHash("sha1").update(label).digest("hex");

export const TEMPLATE = `Task {{task.kind}} on {{repository.fullName}} at {{ref.commitSha}} ({{ref.branch}}).
Failed: {{pipeline.checkName}} / {{job.name}} / {{job.step}}, signature {{failure.signature}}.
Tools: {{stack.tools}}
{{logs.excerpt}}
{{contextLabels}}
{{task.outputFormat}}`;

export function stackSpec(overrides: Partial<StackSpec> = {}): StackSpec {
  return {
    modelProvider: "anthropic",
    model: "claude-sonnet-4-5",
    adapter: { kind: "command", command: ["claude", "-p", "--output-format", "stream-json"], env: ["ANTHROPIC_API_KEY"], outputFormat: "claude-stream-json" },
    tools: ["Read", "Grep"],
    mcpServers: [{ name: "ci-history", transport: "http", target: "https://mcp.example.test/ci", secrets: [], configMaps: ["ci-endpoints"], privileged: false, required: true }],
    skills: ["ci-log-reading"],
    subagents: [{ name: "diagnoser", role: "Finds the root cause.", tools: ["Read"] }],
    approvalMode: "always",
    promptTemplate: TEMPLATE,
    limits: { wallClockMinutes: 30, maxCostUsd: 5, maxRetries: 2 },
    ...overrides,
  };
}

export function stackInput(overrides: Omit<Partial<StackFormValues>, "spec"> & { spec?: Partial<StackSpec> } = {}): StackFormValues {
  const { spec, ...rest } = overrides;
  return { name: `stack-${uid()}`, description: "A test stack", ...rest, spec: stackSpec(spec) };
}

export async function makeStack(db: PrismaClient, actor: SessionUser, overrides: Parameters<typeof stackInput>[0] = {}) {
  return createStack({ db, actor, input: stackInput(overrides) });
}

export function ruleInput(overrides: Partial<TriggerRuleFormValues> & Pick<TriggerRuleFormValues, "stackId">): TriggerRuleFormValues {
  return {
    name: `rule-${uid()}`,
    kind: "failed_check",
    repositoryId: null,
    workflow: null,
    job: null,
    step: null,
    branchGlob: null,
    pathFilters: [],
    failureSignature: null,
    taskKind: "diagnose",
    action: "suggest",
    enabled: true,
    ...overrides,
  };
}

export function makeRule(db: PrismaClient, actor: SessionUser, overrides: Parameters<typeof ruleInput>[0]) {
  return createTriggerRule({ db, actor, input: ruleInput(overrides) });
}

export const FAILING_LOG = `$ npm test
 FAIL  src/sum.test.ts > sum > adds two numbers
AssertionError: expected 3 to be 4
 ❯ src/sum.test.ts:5:20
Test Files  1 failed (1)
npm ERR! Test failed.`;

/** A job-level failed check as local CI sends it. */
export function failedCheck(o: { repo: string; headSha: string; runId: string; workflowName?: string; jobName?: string; step?: string; headBranch?: string }): FailedCheckEvent {
  const workflowName = o.workflowName ?? "CI";
  const jobName = o.jobName ?? "test";
  return {
    type: "failed_check",
    origin: "local",
    via: "local_ci",
    level: "job",
    repository: { fullName: o.repo, cloneUrl: `file:///forge/${o.repo}.git`, htmlUrl: null, defaultBranch: "main", visibility: "private" },
    actor: { login: "local-ci", type: "bot", association: null, airlockRole: null },
    headSha: o.headSha,
    headBranch: o.headBranch ?? "main",
    triggerEvent: "push",
    pullRequests: [],
    isFork: false,
    workflowName,
    jobName,
    checkName: `${workflowName} / ${jobName}`,
    step: o.step ?? "npm test",
    runId: o.runId,
    jobId: `${o.runId}-1`,
    runAttempt: 1,
    url: null,
    conclusion: "failure",
    startedAt: "2026-11-29T10:00:00Z",
    completedAt: "2026-11-29T10:01:00Z",
    runnerLabels: ["local-ci"],
    runnerName: "local-ci",
  };
}

/** Records a failing check as a delivery (not evaluated yet). */
export async function recordFailure(db: PrismaClient, event: FailedCheckEvent, deliveryId = `local-test-${uid()}`, now?: Date) {
  const result = await ingestCiEvent({ db, event, deliveryId, log: FAILING_LOG, now });
  return result.deliveryId;
}

/** Evaluates a recorded delivery through the live trigger path. */
export const evaluate = (db: PrismaClient, deliveryId: string) => evaluateDelivery({ db, deliveryId });

/**
 * Calls a procedure through the real fetch adapter and error formatter, as the browser does, and
 * returns the JSON error (with `data.fieldErrors`) or the result.
 */
export async function callHttp(user: SessionUser | null, path: string, input: unknown) {
  const res = await fetchRequestHandler({
    endpoint: "/api/trpc",
    req: new Request(`http://localhost:3000/api/trpc/${path}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ json: input }),
    }),
    router: appRouter,
    createContext: () => createTRPCContext({ user }),
  });
  const body = (await res.json()) as {
    error?: { json: { message: string; data: { code: string; fieldErrors: Record<string, string[]> | null; details: Record<string, unknown> | null } } };
    result?: { data: { json: unknown } };
  };
  return { status: res.status, error: body.error?.json ?? null, data: body.result?.data.json };
}
