import { z } from "zod";

// An AgentStack's definition: what a run of it gets (model, adapter, tools, MCP
// servers, skills, subagents, approval mode, prompt template, limits). Stored as
// versions; a run keeps a snapshot with its digest, so editing a stack never
// rewrites history. The stack forms validate with these same schemas. No Node imports: the
// stack editor runs these in the browser (stackSnapshot, which hashes, lives in spec.ts).

const zName = z
  .string()
  .trim()
  .min(1, "Required")
  .max(80)
  .regex(/^[a-z0-9][a-z0-9._-]*$/, "Lowercase letters, digits, dot, dash and underscore");

/** A tool as Claude Code names it ("Bash", "Read", "mcp__github__create_pr", "Bash(npm test:*)"). */
const zToolName = z.string().trim().min(1).max(200, "At most 200 characters");

export const zMcpServer = z.object({
  name: zName,
  transport: z.enum(["stdio", "http", "sse"]),
  // A URL for http/sse, a command line for stdio. Never "${...}": Claude Code expands variables
  // in MCP configs, and a server must not name a variable (a secret) it was not granted.
  target: z.string().trim().min(1, "Required").max(500).refine((t) => !t.includes("${"), "No ${...} variables: a server gets only its granted secrets"),
  secrets: z.array(zName).max(32, "At most 32 secrets").default([]),
  configMaps: z.array(zName).max(32, "At most 32 config maps").default([]),
  privileged: z.boolean().default(false),
  // Checked before every launch (initialize, then tools/list). Required by default: the stack's
  // prompt and its mcp__<name>__ tools assume the server, so a run without it would not be the
  // run the stack defines; one that fails refuses the launch. An optional one that fails is
  // reported and left out of the agent's MCP config.
  required: z.boolean().default(true),
});

export const zSubagent = z.object({
  name: zName,
  role: z.string().trim().min(1, "Required").max(500),
  tools: z.array(zToolName).max(100, "At most 100 tools").default([]),
});

export const zAdapter = z.discriminatedUnion("kind", [
  z.object({
    kind: z.literal("command"),
    // argv, never a shell string: no quoting surprises, no injection.
    command: z.array(z.string().min(1).max(4_096, "At most 4,096 characters")).min(1, "A command is required").max(64, "At most 64 arguments"),
    // Names of environment variables the command receives (values come from grants).
    env: z.array(z.string().max(128).regex(/^[A-Z_][A-Z0-9_]*$/, "UPPER_SNAKE_CASE")).max(64, "At most 64 variables").default([]),
    // "auto" reads Airlock event lines and Claude Code stream-json alike (output-decoder.ts).
    outputFormat: z.enum(["auto", "airlock", "claude-stream-json"]).default("auto"),
  }),
  z.object({
    // The Claude Code CLI built from the stack (server/execution/agents/claude-code/): model, tools, MCP
    // servers, subagents, skills and limits become its flags and generated files.
    kind: z.literal("claude-code"),
    // The secret holding the model API key (ANTHROPIC_API_KEY), granted like any secret.
    apiKeySecret: zName.default("anthropic-api-key"),
    // A config map holding the model API base URL (ANTHROPIC_BASE_URL), for a gateway; optional.
    baseUrlConfigMap: zName.optional(),
    maxTurns: z.number().int().min(1, "At least 1").max(500, "At most 500").default(50),
  }),
  z.object({
    kind: z.literal("scripted"),
    // A recorded scenario under server/execution/agents/scenarios/ (demo and tests only).
    scenario: z.string().trim().min(1, "Required").max(200),
  }),
]);

export const zStackLimits = z.object({
  wallClockMinutes: z.number().int().min(1).max(24 * 60).default(30),
  maxCostUsd: z.number().min(0).max(1000).default(5),
  maxRetries: z.number().int().min(0).max(10).default(2),
});

export const zStackSpec = z.object({
  modelProvider: z.enum(["anthropic", "openai", "google", "local"]),
  // Passed to a CLI as a flag value: a name, never something that could read as another flag.
  model: z.string().trim().min(1, "Required").max(100).regex(/^[A-Za-z0-9][A-Za-z0-9._:/@\[\]-]*$/, "Letters, digits and . _ : / @ - only"),
  adapter: zAdapter,
  tools: z.array(zToolName).max(100, "At most 100 tools").default([]),
  mcpServers: z.array(zMcpServer).max(32, "At most 32 MCP servers").default([]),
  // A skill is a folder of the run's repository, .claude/skills/<name>/SKILL.md at the run's
  // commit; the claude-code adapter copies exactly the named ones to where the CLI reads them.
  skills: z.array(zName).max(100, "At most 100 skills").default([]),
  subagents: z.array(zSubagent).max(32, "At most 32 subagents").default([]),
  approvalMode: z.enum(["always", "exceptions_allowed"]).default("always"),
  promptTemplate: z.string().min(1, "Required").max(20_000),
  limits: zStackLimits.default({ wallClockMinutes: 30, maxCostUsd: 5, maxRetries: 2 }),
});

export type StackSpec = z.infer<typeof zStackSpec>;
