import { z } from "zod";
import { type AgentEvent, eventPayloadLimits, truncateText } from "@/server/domain/events/catalogue";
import { boundJson } from "@/server/lib/text-boundary";

// Claude Code's `--output-format stream-json --verbose` transcript -> catalogue
// events. One JSON message per line: system (init), assistant and user messages
// whose content blocks are text / tool_use / tool_result, and a final result with
// usage and cost. A Task (or Agent) tool use is a subagent: messages carrying its
// id as parent_tool_use_id happen inside it, and its tool_result completes it.
// No I/O: the parser keeps only what it needs to pair results with calls, and
// takes the clock as an argument.

const claudeTypes = new Set(["system", "assistant", "user", "result", "stream_event"]);
const subagentTools = new Set(["Task", "Agent"]);
const maxToolOutputChars = 32 * 1024;
const maxSubagentSummaryChars = 2000;

const zUsage = z
  .object({
    input_tokens: z.number().optional(),
    output_tokens: z.number().optional(),
    cache_creation_input_tokens: z.number().optional(),
    cache_read_input_tokens: z.number().optional(),
  })
  .loose();
type Usage = z.infer<typeof zUsage>;

const zBlock = z.object({ type: z.string() }).loose();
const zTextBlock = z.object({ type: z.literal("text"), text: z.string() });
const zToolUseBlock = z.object({
  type: z.literal("tool_use"),
  id: z.string().min(1),
  name: z.string().min(1),
  input: z.unknown(),
});
const zToolResultBlock = z.object({
  type: z.literal("tool_result"),
  tool_use_id: z.string().min(1),
  content: z.union([z.string(), z.array(zBlock)]).optional(),
  is_error: z.boolean().optional(),
});

const zSystem = z
  .object({
    type: z.literal("system"),
    subtype: z.string(),
    session_id: z.string().optional(),
    model: z.string().optional(),
    cwd: z.string().optional(),
    tools: z.array(z.string()).optional(),
    mcp_servers: z.array(z.object({ name: z.string(), status: z.string().optional() }).loose()).optional(),
  })
  .loose();

const zMessageLine = z
  .object({
    type: z.enum(["assistant", "user"]),
    parent_tool_use_id: z.string().nullish(),
    session_id: z.string().optional(),
    message: z
      .object({
        id: z.string().optional(),
        model: z.string().optional(),
        content: z.union([z.string(), z.array(zBlock)]),
        usage: zUsage.nullish(),
      })
      .loose(),
  })
  .loose();

const zResult = z
  .object({
    type: z.literal("result"),
    subtype: z.string(),
    is_error: z.boolean().optional(),
    result: z.string().optional(),
    session_id: z.string().optional(),
    total_cost_usd: z.number().optional(),
    usage: zUsage.optional(),
    num_turns: z.number().optional(),
    duration_ms: z.number().optional(),
  })
  .loose();

const zClaudeLine = z.discriminatedUnion("type", [
  zSystem,
  zMessageLine,
  zResult,
  z.object({ type: z.literal("stream_event") }).loose(),
]);

export type ClaudeOutcome = { isError: boolean; subtype: string; text?: string };

/** Is this parsed JSON a Claude Code stream-json message (rather than an Airlock event)? */
export function isClaudeStreamMessage(value: unknown): boolean {
  if (typeof value !== "object" || value === null) return false;
  const type = (value as { type?: unknown }).type;
  return typeof type === "string" && claudeTypes.has(type) && zClaudeLine.safeParse(value).success;
}

export type ClaudeStreamParser = {
  /** Events for one parsed JSON line, or null when it is not a Claude message. */
  parse(value: unknown): AgentEvent[] | null;
  /** Claude's own session id, once the init or result message named it. */
  readonly sessionId: string | undefined;
  /** The final result message's outcome, once seen. */
  readonly outcome: ClaudeOutcome | undefined;
};

export function createClaudeStreamParser(options: { now?: () => Date } = {}): ClaudeStreamParser {
  const now = options.now ?? (() => new Date());
  const toolCalls = new Map<string, { startedAtMs: number }>();
  const subagents = new Map<string, { name: string; parentId: string | null }>();
  const usageByMessage = new Map<string, Usage>();
  let sessionId: string | undefined;
  let model: string | undefined;
  let outcome: ClaudeOutcome | undefined;

  function costFromUsage(usage: Usage, usd?: number): AgentEvent {
    const cacheRead = usage.cache_read_input_tokens ?? 0;
    const cacheWrite = usage.cache_creation_input_tokens ?? 0;
    return {
      type: "cost",
      payload: {
        // Input counts everything the model read, cached or not; the split is kept alongside.
        inputTokens: (usage.input_tokens ?? 0) + cacheRead + cacheWrite,
        outputTokens: usage.output_tokens ?? 0,
        cacheReadTokens: cacheRead,
        cacheWriteTokens: cacheWrite,
        ...(usd !== undefined ? { usd } : {}),
        ...(model ? { model } : {}),
      },
    };
  }

  function runningTotal(): Usage {
    const total = { input_tokens: 0, output_tokens: 0, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 };
    for (const u of usageByMessage.values()) {
      total.input_tokens += u.input_tokens ?? 0;
      total.output_tokens += u.output_tokens ?? 0;
      total.cache_read_input_tokens += u.cache_read_input_tokens ?? 0;
      total.cache_creation_input_tokens += u.cache_creation_input_tokens ?? 0;
    }
    return total;
  }

  function system(msg: z.infer<typeof zSystem>): AgentEvent[] {
    sessionId = msg.session_id ?? sessionId;
    if (msg.subtype !== "init") {
      return [{ type: "log", payload: { stream: "system", text: `Claude Code: ${msg.subtype}` } }];
    }
    model = msg.model ?? model;
    const parts = ["Claude Code session started"];
    if (msg.model) parts.push(`model \`${msg.model}\``);
    if (msg.tools) parts.push(`${msg.tools.length} tools (${msg.tools.join(", ")})`);
    if (msg.mcp_servers?.length) {
      parts.push(`MCP: ${msg.mcp_servers.map((s) => (s.status ? `${s.name} (${s.status})` : s.name)).join(", ")}`);
    }
    return [{ type: "message", payload: { role: "system", text: parts.join(" · ") } }];
  }

  function assistant(msg: z.infer<typeof zMessageLine>): AgentEvent[] {
    const events: AgentEvent[] = [];
    const subagentId = msg.parent_tool_use_id ?? undefined;
    const scope = subagentId ? { subagentId } : {};
    model = msg.message.model ?? model;
    const blocks = typeof msg.message.content === "string" ? [{ type: "text", text: msg.message.content }] : msg.message.content;
    for (const raw of blocks) {
      const text = zTextBlock.safeParse(raw);
      if (text.success) {
        if (text.data.text.trim()) {
          events.push({ type: "message", payload: { role: "assistant", text: truncateText(text.data.text), ...scope } });
        }
        continue;
      }
      const use = zToolUseBlock.safeParse(raw);
      if (!use.success) continue; // thinking, images, server tools: not part of the transcript
      const at = now();
      toolCalls.set(use.data.id, { startedAtMs: at.getTime() });
      events.push({
        type: "tool_call",
        payload: { id: use.data.id, name: use.data.name, input: use.data.input ?? {}, startedAt: at.toISOString(), ...scope },
      });
      if (subagentTools.has(use.data.name)) {
        const input = (use.data.input ?? {}) as { subagent_type?: unknown; description?: unknown };
        const name = typeof input.subagent_type === "string" ? input.subagent_type : "general-purpose";
        const parentId = subagentId ?? null;
        subagents.set(use.data.id, { name, parentId });
        events.push({
          type: "subagent_started",
          payload: {
            id: use.data.id,
            name,
            parentId,
            ...(typeof input.description === "string" ? { summary: input.description } : {}),
          },
        });
      }
    }
    // A message's usage repeats on every line of it; count each message once, latest usage wins.
    const messageId = msg.message.id;
    if (messageId && msg.message.usage) {
      const first = !usageByMessage.has(messageId);
      usageByMessage.set(messageId, msg.message.usage);
      if (first) events.push(costFromUsage(runningTotal()));
    }
    return events;
  }

  function user(msg: z.infer<typeof zMessageLine>): AgentEvent[] {
    const subagentId = msg.parent_tool_use_id ?? undefined;
    const scope = subagentId ? { subagentId } : {};
    if (typeof msg.message.content === "string") {
      return [{ type: "message", payload: { role: "user", text: truncateText(msg.message.content), ...scope } }];
    }
    const events: AgentEvent[] = [];
    for (const raw of msg.message.content) {
      const text = zTextBlock.safeParse(raw);
      if (text.success) {
        events.push({ type: "message", payload: { role: "user", text: truncateText(text.data.text), ...scope } });
        continue;
      }
      const result = zToolResultBlock.safeParse(raw);
      if (!result.success) continue;
      const { tool_use_id: toolCallId, is_error: isError = false } = result.data;
      const output = toolOutputText(result.data.content);
      const call = toolCalls.get(toolCallId);
      toolCalls.delete(toolCallId);
      events.push({
        type: "tool_result",
        payload: {
          toolCallId,
          output: truncateText(output, maxToolOutputChars),
          isError,
          ...(call ? { durationMs: Math.max(0, now().getTime() - call.startedAtMs) } : {}),
          ...scope,
        },
      });
      const sub = subagents.get(toolCallId);
      if (sub) {
        subagents.delete(toolCallId);
        events.push({
          type: "subagent_completed",
          payload: { id: toolCallId, ...sub, summary: truncateText(output, maxSubagentSummaryChars), isError },
        });
      }
    }
    return events;
  }

  function result(msg: z.infer<typeof zResult>): AgentEvent[] {
    sessionId = msg.session_id ?? sessionId;
    const isError = msg.is_error ?? msg.subtype !== "success";
    outcome = { isError, subtype: msg.subtype, ...(msg.result !== undefined ? { text: msg.result } : {}) };
    const events: AgentEvent[] = [];
    const usage = msg.usage ?? (usageByMessage.size > 0 ? runningTotal() : undefined);
    if (usage || msg.total_cost_usd !== undefined) events.push(costFromUsage(usage ?? {}, msg.total_cost_usd));
    if (isError) {
      const detail = msg.result ? `: ${truncateText(msg.result, 2000)}` : "";
      events.push({ type: "log", payload: { stream: "system", text: `Claude Code finished with ${msg.subtype}${detail}` } });
    }
    return events;
  }

  return {
    parse(value) {
      if (typeof value !== "object" || value === null) return null;
      const type = (value as { type?: unknown }).type;
      if (typeof type !== "string" || !claudeTypes.has(type)) return null;
      const parsed = zClaudeLine.safeParse(value);
      if (!parsed.success) return null;
      const msg = parsed.data;
      switch (msg.type) {
        case "system":
          return system(msg);
        case "assistant":
          return assistant(msg);
        case "user":
          return user(msg);
        case "result":
          return result(msg);
        case "stream_event":
          return []; // partial deltas; the complete message follows as its own line
      }
    },
    get sessionId() {
      return sessionId;
    },
    get outcome() {
      return outcome;
    },
  };
}

function toolOutputText(content: string | Array<{ type: string }> | undefined): string {
  if (content === undefined) return "";
  if (typeof content === "string") return content;
  return content
    .map((block) => {
      const text = zTextBlock.safeParse(block);
      return text.success ? text.data.text : `[${block.type}]`;
    })
    .join("\n");
}

/** Parses a whole transcript (one message per line); lines that are not Claude messages are skipped. */
export function parseClaudeTranscript(text: string, options: { now?: () => Date } = {}): AgentEvent[] {
  const parser = createClaudeStreamParser(options);
  const events: AgentEvent[] = [];
  for (const line of text.split("\n")) {
    if (!line.trim()) continue;
    let value: unknown;
    try {
      // Bounded like a live line (output-decoder.ts): deep or huge JSON cannot overflow a walk.
      value = boundJson(JSON.parse(line), eventPayloadLimits).value;
    } catch {
      continue;
    }
    events.push(...(parser.parse(value) ?? []));
  }
  return events;
}
