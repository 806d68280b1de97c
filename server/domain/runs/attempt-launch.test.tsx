import { renderToStaticMarkup } from "react-dom/server";
import { afterEach, describe, expect, it } from "vitest";
import { zStackSpec } from "@/server/domain/stacks/spec";
import { zRanWith } from "@/server/domain/runs/schemas";
import { attemptLaunch } from "./attempt-launch";
import type { AdmissionDecision } from "@/server/domain/pools/admission";
import { claudeCodeLaunchPlan } from "@/server/execution/agents/claude-code/launch-plan";
import { zPresented } from "@/server/domain/approvals/schemas";
import { RanWithView } from "@/components/approvals/ran-with";

// A write-back's approval shows what the agent ran with: the attempt's stored launch record,
// built here as the worker builds it (the claude-code launch plan, the stack, its admission).
// Secrets appear by name only: their values, set on the server, never reach the record.

const keyValue = "sk-ant-this-value-must-never-show";
const sentryValue = "sntrys_this-value-must-never-show";

afterEach(() => {
  delete process.env.AIRLOCK_SECRET_ANTHROPIC_API_KEY;
  delete process.env.AIRLOCK_SECRET_SENTRY_AUTH_TOKEN;
});

function ranWith() {
  process.env.AIRLOCK_SECRET_ANTHROPIC_API_KEY = keyValue;
  process.env.AIRLOCK_SECRET_SENTRY_AUTH_TOKEN = sentryValue;
  const spec = zStackSpec.parse({
    modelProvider: "anthropic",
    model: "claude-sonnet-4-5",
    adapter: { kind: "claude-code", maxTurns: 12 },
    tools: ["Read", "Bash(npm test:*)"],
    mcpServers: [{ name: "sentry", transport: "http", target: "https://mcp.sentry.dev/mcp", secrets: ["sentry-auth-token"] }],
    subagents: [{ name: "reviewer", role: "Reviews the patch", tools: ["Read"] }],
    promptTemplate: "Fix it",
    limits: { wallClockMinutes: 5, maxCostUsd: 2, maxRetries: 0 },
  });
  if (spec.adapter.kind !== "claude-code") throw new Error("claude-code stack expected");
  const grants = { secrets: new Set(["anthropic-api-key", "sentry-auth-token"]), configMaps: new Set<string>() };
  const plan = claudeCodeLaunchPlan(spec, spec.adapter, { binary: "/opt/claude", configDir: "/s/claude", contextFile: "/s/context.json", artifactsDir: "/a" }, grants);
  const admission = {
    secretsGranted: [
      { name: "anthropic-api-key", grantId: "g1", privileged: false },
      { name: "sentry-auth-token", grantId: "g2", privileged: false },
    ],
    configMapsGranted: [],
  } as unknown as AdmissionDecision;
  const launch = attemptLaunch({ spec, admission, adapter: "claude-code", launch: { command: plan.argv, files: plan.files, env: plan.env, withheld: plan.withheld, continuation: null } });
  return zRanWith.parse({ attemptNumber: 2, launch });
}

describe("what the agent ran with, on a write-back's approval", () => {
  it("shows the command line, generated files, model, tools, MCP servers and secrets by name", () => {
    const html = renderToStaticMarkup(<RanWithView ranWith={ranWith()} />);
    for (const text of [
      "What the agent ran with (attempt 2)",
      "anthropic/claude-sonnet-4-5 · claude-code",
      "Read, Bash(npm test:*)",
      "sentry: http https://mcp.sentry.dev/mcp",
      "anthropic-api-key, sentry-auth-token",
      "ANTHROPIC_API_KEY (secret anthropic-api-key, held by Airlock",
      "model gateway outside the sandbox; the agent gets a placeholder)",
      "/opt/claude --print --output-format=stream-json --verbose --model=claude-sonnet-4-5",
      "--max-turns=12",
      "Generated file settings.json",
      "Generated file mcp.json",
      "Bearer ${SENTRY_AUTH_TOKEN}",
    ]) {
      expect(html).toContain(text.replaceAll("&", "&amp;"));
    }
  });

  it("no secret value appears, in the record or on the screen", () => {
    const record = ranWith();
    const html = renderToStaticMarkup(<RanWithView ranWith={record} />);
    for (const value of [keyValue, sentryValue]) {
      expect(JSON.stringify(record)).not.toContain(value);
      expect(html).not.toContain(value);
    }
  });

  it("a request's frozen record of another shape is refused by the screen's schema", () => {
    const p = zPresented.shape.ranWith;
    expect(p.safeParse({ attemptNumber: 1, launch: { ...ranWith().launch, adapter: "shell" } }).success).toBe(false);
    expect(p.safeParse(undefined).success).toBe(true);
  });
});
