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

export const zMcpServer = z.object({
  name: zName,
  transport: z.enum(["stdio", "http", "sse"]),
  // A URL for http/sse, a command line for stdio.
  target: z.string().trim().min(1, "Required").max(500),
  secrets: z.array(zName).default([]),
  configMaps: z.array(zName).default([]),
  privileged: z.boolean().default(false),
});

export const zSubagent = z.object({
  name: zName,
  role: z.string().trim().min(1, "Required").max(500),
  tools: z.array(z.string().trim().min(1)).default([]),
});

export const zAdapter = z.discriminatedUnion("kind", [
  z.object({
    kind: z.literal("command"),
    // argv, never a shell string: no quoting surprises, no injection.
    command: z.array(z.string().min(1)).min(1, "A command is required"),
    // Names of environment variables the command receives (values come from grants).
    env: z.array(z.string().regex(/^[A-Z_][A-Z0-9_]*$/, "UPPER_SNAKE_CASE")).default([]),
    outputFormat: z.enum(["airlock", "claude-stream-json"]).default("airlock"),
  }),
  z.object({
    kind: z.literal("scripted"),
    // A recorded scenario under server/agents/scenarios/ (demo and tests only).
    scenario: z.string().trim().min(1, "Required"),
  }),
]);

export const zStackLimits = z.object({
  wallClockMinutes: z.number().int().min(1).max(24 * 60).default(30),
  maxCostUsd: z.number().min(0).max(1000).default(5),
  maxRetries: z.number().int().min(0).max(10).default(2),
});

export const zStackSpec = z.object({
  modelProvider: z.enum(["anthropic", "openai", "google", "local"]),
  model: z.string().trim().min(1, "Required").max(100),
  adapter: zAdapter,
  tools: z.array(z.string().trim().min(1)).default([]),
  mcpServers: z.array(zMcpServer).default([]),
  skills: z.array(z.string().trim().min(1)).default([]),
  subagents: z.array(zSubagent).default([]),
  approvalMode: z.enum(["always", "exceptions_allowed"]).default("always"),
  promptTemplate: z.string().min(1, "Required").max(20_000),
  limits: zStackLimits.default({ wallClockMinutes: 30, maxCostUsd: 5, maxRetries: 2 }),
});

export type StackSpec = z.infer<typeof zStackSpec>;
