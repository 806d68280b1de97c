import { renderToStaticMarkup } from "react-dom/server";
import { describe, expect, it } from "vitest";
import { zPresentedLaunch } from "@/server/domain/approvals/schemas";
import { PrivilegedLaunchView } from "./privileged-launch";

// A privileged_capability approval shows everything the attempt launches with, parsed from the
// frozen request with its zod schema: nothing the record does not say, no secret value.

const launch = {
  attemptId: "att_1",
  attemptNumber: 1,
  digest: "sha256:abc123",
  record: {
    prompt: "Fix the failing check.",
    promptHash: "sha256:p",
    contextDigest: "sha256:c",
    contextLabels: ["ci_failure", "diff"],
    stack: {
      name: "ci-fixer",
      version: 3,
      digest: "sha256:s",
      model: "anthropic/claude-sonnet-4",
      adapter: "claude-code",
      tools: ["Read", "Bash(npm test:*)"],
      mcpServers: [{ name: "prod-db", transport: "stdio", target: "prod-db-mcp --read-only", secrets: ["db-password"], configMaps: ["db-host"], privileged: true }],
      skills: ["triage-notes"],
      subagents: [{ name: "reviewer", role: "Reviews the patch", tools: ["Read"] }],
    },
    pool: { name: "trusted-local", trustTier: "trusted", kind: "local" },
    runtimeServiceAccount: { name: "agent-runtime-privileged", namespace: "airlock", privileged: true },
    runnerServiceAccount: { name: "runner", namespace: "airlock", privileged: false },
    secrets: [{ name: "db-password", privileged: true }],
    configMaps: ["db-host"],
    network: { mode: "open", hosts: [] },
    privileged: [
      { kind: "secret", name: "db-password", why: "its grant marks the secret privileged" },
      { kind: "mcp_server", name: "prod-db", why: "the stack marks MCP server prod-db privileged" },
      { kind: "network", name: "open", why: "pool trusted-local lets the agent reach any host but this machine" },
    ],
  },
};

describe("a privileged_capability approval's presentation", () => {
  it("shows the privileged parts with why, the digest, pool, both accounts, grants by name, network, tools, MCP, skills, subagents, context", () => {
    const html = renderToStaticMarkup(<PrivilegedLaunchView launch={zPresentedLaunch.parse(launch)} />);
    for (const text of [
      "Privileged secret</strong> db-password",
      "Privileged MCP server</strong> prod-db",
      "Open network</strong> open",
      "sha256:abc123",
      "trusted-local (trusted, local)",
      "airlock/agent-runtime-privileged (privileged)",
      "airlock/runner",
      "db-password (privileged)",
      "db-host",
      "open (any host but this machine)",
      "Read, Bash(npm test:*)",
      "prod-db: stdio prod-db-mcp --read-only (privileged)",
      "triage-notes",
      "reviewer (Reviews the patch; tools Read)",
      "ci_failure, diff",
    ]) {
      expect(html).toContain(text);
    }
  });

  it("refuses a record of another shape rather than rendering it", () => {
    expect(zPresentedLaunch.safeParse({ ...launch, record: { ...launch.record, network: { mode: "wide", hosts: [] } } }).success).toBe(false);
  });
});
