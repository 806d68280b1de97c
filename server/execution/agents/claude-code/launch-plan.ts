import { envVarName } from "@/server/env";
import type { StackSpec } from "@/server/domain/stacks/spec";

// The Claude Code command line and generated files for a stack: pure, so the stack preview, the
// attempt's transcript and the process all show and run the same thing.
//
// - model -> --model; limits -> --max-turns and --max-budget-usd (the CLI's own stop, which
//   ends the session with error_max_budget_usd; Airlock's meter, runner/cost-meter.ts, holds the
//   attempt to the same cap from each message's usage);
// - tools -> --tools (the built-in tools that exist at all) and the generated settings'
//   permissions.allow (what runs without asking); the permission mode is dontAsk, so anything
//   else is refused, never asked: the stack's approval mode governs Airlock's write-backs, and a
//   CI agent has no one to ask;
// - MCP servers -> a generated --mcp-config with --strict-mcp-config (no server of the
//   repository's own); each server's granted secrets and config maps by ${NAME} reference, so the
//   file holds names only and the values stay in the process environment;
// - subagents -> --agents JSON; skills -> copied from the repository (see claude-code-adapter.ts);
// - the prompt goes on stdin, never argv; every flag is one `--flag=value` argument, so no value
//   (a role, a model, a path) can be read as a flag of its own;
// - settings come only from the generated file (--setting-sources=user over a fresh HOME), so a
//   repository's .claude/settings.json cannot widen the tools or add hooks.

export type ClaudeCodeAdapter = Extract<StackSpec["adapter"], { kind: "claude-code" }>;

export type LaunchPaths = {
  /** The installed `claude` binary. */
  binary: string;
  /** A read-only folder holding the generated files. */
  configDir: string;
  /** The run's context bundle (JSON). */
  contextFile: string;
  artifactsDir: string;
};

export type LaunchPlan = {
  argv: string[];
  /** Generated files, by path relative to configDir, exactly as written. */
  files: { name: string; content: string }[];
  /** Environment variables the process gets, by name (values come from grants). */
  env: { name: string; from: string }[];
  /** What the stack asked for and does not get, each with the reason. */
  withheld: string[];
};

export type Grants = { secrets: ReadonlySet<string>; configMaps: ReadonlySet<string> };

const settingsFile = "settings.json";
const mcpFile = "mcp.json";
const subagentTool = "Task";
const skillTool = "Skill";

/** A tool rule's tool ("Bash(npm test:*)" -> "Bash"); MCP tools are not in the built-in set. */
const baseTool = (rule: string) => rule.replace(/\(.*$/s, "").trim();
const isMcpTool = (rule: string) => rule.startsWith("mcp__");

/** One server's entry in the generated --mcp-config; `${NAME}` refers to a granted variable. */
export type McpConfigEntry =
  | { type: "stdio"; command: string; args: string[]; env: Record<string, string> }
  | { type: "http" | "sse"; url: string; headers: Record<string, string> };

/**
 * The stack's MCP servers as the generated --mcp-config holds them, the variables they need (by
 * name, from grants) and what they asked for and do not get. The health checks (mcp-health.ts)
 * probe exactly these entries.
 */
export function mcpServerEntries(spec: StackSpec, grants: Grants): { servers: Record<string, McpConfigEntry>; env: LaunchPlan["env"]; withheld: string[] } {
  const withheld: string[] = [];
  const env: LaunchPlan["env"] = [];
  const servers: Record<string, McpConfigEntry> = {};
  for (const server of spec.mcpServers) {
    const refs: Record<string, string> = {};
    for (const [kind, names, granted] of [["secret", server.secrets, grants.secrets], ["config map", server.configMaps, grants.configMaps]] as const) {
      for (const name of names) {
        if (!granted.has(name)) {
          withheld.push(`${kind} ${name} for MCP server ${server.name}: not granted`);
          continue;
        }
        const variable = envVarName(name);
        refs[variable] = `\${${variable}}`;
        if (!env.some((e) => e.name === variable)) env.push({ name: variable, from: `${kind} ${name}` });
      }
    }
    if (server.target.includes("${")) throw new Error(`MCP server ${server.name}: its target names a variable; a server gets only its granted secrets`);
    if (server.transport === "stdio") {
      const [command, ...args] = server.target.split(/\s+/).filter(Boolean);
      servers[server.name] = { type: "stdio", command: command!, args, env: refs };
    } else {
      // A remote server gets its one granted secret as a bearer token; config maps as headers by name.
      const secretRefs = server.secrets.filter((n) => grants.secrets.has(n)).map((n) => refs[envVarName(n)]!);
      const headers: Record<string, string> = {};
      if (secretRefs.length > 0) headers.Authorization = `Bearer ${secretRefs[0]}`;
      for (const n of server.configMaps.filter((c) => grants.configMaps.has(c))) headers[`X-Airlock-${envVarName(n)}`] = refs[envVarName(n)]!;
      servers[server.name] = { type: server.transport, url: server.target, headers };
    }
  }
  return { servers, env, withheld };
}

/**
 * `leaveOut`: servers that failed a health check the stack lets them fail (not required), by
 * name with the reason: they are not in the --mcp-config at all, and the plan says why.
 */
export function claudeCodeLaunchPlan(
  spec: StackSpec,
  adapter: ClaudeCodeAdapter,
  paths: LaunchPaths,
  grants: Grants,
  leaveOut: ReadonlyMap<string, string> = new Map(),
  /** A continuation's earlier Claude session, resumed (its history kept, a new session id). */
  resumeSessionId?: string,
): LaunchPlan {
  const withheld: string[] = [];
  const env: LaunchPlan["env"] = [];
  // The key and base URL reach Airlock's model gateway, outside the sandbox; the agent holds a
  // placeholder key and the gateway's address (sandbox/model-gateway.ts).
  if (grants.secrets.has(adapter.apiKeySecret)) env.push({ name: "ANTHROPIC_API_KEY", from: `secret ${adapter.apiKeySecret}, held by Airlock's model gateway outside the sandbox; the agent gets a placeholder` });
  else withheld.push(`secret ${adapter.apiKeySecret} (the model API key): not granted`);
  if (adapter.baseUrlConfigMap) {
    if (grants.configMaps.has(adapter.baseUrlConfigMap)) env.push({ name: "ANTHROPIC_BASE_URL", from: `config map ${adapter.baseUrlConfigMap}, where the model gateway forwards; the agent gets the gateway's address` });
    else withheld.push(`config map ${adapter.baseUrlConfigMap} (the model API base URL): not granted`);
  }
  const mcp = mcpServerEntries({ ...spec, mcpServers: spec.mcpServers.filter((s) => !leaveOut.has(s.name)) }, grants);
  const servers = mcp.servers;
  for (const e of mcp.env) if (!env.some((x) => x.name === e.name)) env.push(e);
  withheld.push(...mcp.withheld);
  for (const [name, reason] of leaveOut) withheld.push(`MCP server ${name}: left out, its health check failed (${reason})`);

  // Naming subagents or skills grants the tool that uses them; only the named ones exist.
  const implied = [...(spec.subagents.length > 0 ? [subagentTool] : []), ...(spec.skills.length > 0 ? [skillTool] : [])];
  const builtin = [...new Set([...spec.tools.filter((t) => !isMcpTool(t)).map(baseTool), ...implied])];
  const allow = [...new Set([...spec.tools, ...implied])];
  const settings = {
    permissions: { allow, deny: [], defaultMode: "dontAsk" },
    // Hooks would run commands the stack does not list; none come from anywhere.
    disableAllHooks: true,
  };
  const agents = Object.fromEntries(
    spec.subagents.map((s) => [s.name, { description: s.role, prompt: s.role, ...(s.tools.length > 0 ? { tools: s.tools } : {}) }]),
  );
  const system = [
    `You are running in Airlock, in a CI sandbox, for one task; no one will answer questions.`,
    `The run's context bundle (the failure, its logs and the change) is the JSON file ${paths.contextFile}.`,
    `Write any file meant for the maintainers (a diagnosis, a patch) to ${paths.artifactsDir}.`,
  ].join("\n");

  const argv = [
    paths.binary,
    "--print",
    "--output-format=stream-json",
    "--verbose",
    `--model=${spec.model}`,
    `--tools=${builtin.join(",")}`,
    "--permission-mode=dontAsk",
    `--settings=${paths.configDir}/${settingsFile}`,
    "--setting-sources=user",
    `--mcp-config=${paths.configDir}/${mcpFile}`,
    "--strict-mcp-config",
    ...(spec.subagents.length > 0 ? [`--agents=${JSON.stringify(agents)}`] : []),
    `--max-turns=${adapter.maxTurns}`,
    ...(spec.limits.maxCostUsd > 0 ? [`--max-budget-usd=${spec.limits.maxCostUsd}`] : []),
    `--append-system-prompt=${system}`,
    ...(resumeSessionId ? [`--resume=${resumeSessionId}`, "--fork-session"] : []),
  ];
  const files = [
    { name: settingsFile, content: `${JSON.stringify(settings, null, 2)}\n` },
    { name: mcpFile, content: `${JSON.stringify({ mcpServers: servers }, null, 2)}\n` },
  ];
  return { argv, files, env, withheld };
}

/** Placeholder paths for showing a plan before any attempt exists (the stack preview). */
export const previewPaths: LaunchPaths = {
  binary: "claude",
  configDir: "$SESSION/claude",
  contextFile: "$SESSION/context.json",
  artifactsDir: "$ARTIFACTS",
};
