import { z } from "zod";
import { type AgentEvent, eventPayloadLimits, truncateText } from "@/server/domain/events/catalogue";
import { boundJson } from "@/server/lib/text-boundary";
import { type Priced, priceUsage, sumPriced } from "./pricing";

// Claude Code's `--output-format stream-json --verbose` transcript -> catalogue
// events. One JSON message per line: system (init), assistant and user messages
// whose content blocks are text / tool_use / tool_result, and a final result with
// usage and cost. A Task (or Agent) tool use is a subagent: messages carrying its
// id as parent_tool_use_id happen inside it, and its tool_result completes it.
// No I/O: the parser keeps only what it needs to pair results with calls, and
// takes the clock as an argument.

const claudeTypes = new Set(["system", "assistant", "user", "result", "stream_event"]);
const subagentTools = new Set(["Task", "Agent"]);
// Progress ticks with nothing for a reader (token estimates, status pings, a subagent task's
// lifecycle, which its Task tool call and result already show).
const quietSystemSubtypes = new Set(["thinking_tokens", "status", "task_started", "task_progress", "task_updated", "task_notification"]);
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
const zThinkingBlock = z.object({ type: z.literal("thinking"), thinking: z.string() });
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

const zModelUsage = z
  .object({
    inputTokens: z.number().optional(),
    outputTokens: z.number().optional(),
    cacheReadInputTokens: z.number().optional(),
    cacheCreationInputTokens: z.number().optional(),
    costUSD: z.number().optional(),
  })
  .loose();

const zResult = z
  .object({
    type: z.literal("result"),
    subtype: z.string(),
    is_error: z.boolean().optional(),
    result: z.string().optional(),
    // The CLI's own error lines (error_during_execution, error_max_turns, ...).
    errors: z.array(z.string()).optional(),
    // Per model, subagents and side requests included: the run's true totals.
    modelUsage: z.record(z.string(), zModelUsage).optional(),
    permission_denials: z
      .array(z.object({ tool_name: z.string(), tool_use_id: z.string().optional(), tool_input: z.unknown().optional() }).loose())
      .optional(),
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

export type ClaudeOutcome = { isError: boolean; subtype: string; text?: string; errors: string[]; usd?: number };

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
  // Each message's usage and the model that answered it (a subagent may use another model).
  const usageByMessage = new Map<string, { usage: Usage; model: string | undefined }>();
  let sessionId: string | undefined;
  let model: string | undefined;
  let outcome: ClaudeOutcome | undefined;
  // Model calls, per scope (the main conversation, or a subagent by its tool call's id): the
  // message being received, and when the input it answers was complete (the session's start,
  // the last user line, or the previous message's end).
  type PendingCall = { id: string; model: string | undefined; usage: Usage; startedAtMs: number; lastAtMs: number; subagentId?: string };
  const pendingCalls = new Map<string, PendingCall>();
  const inputAtMs = new Map<string, number>();
  let sessionStartMs: number | undefined;
  // One clock reading per line, taken when first needed: everything a line says happened then.
  let lineAt: Date | undefined;
  const at = () => (lineAt ??= now());

  function modelCall(call: PendingCall): AgentEvent {
    const u = call.usage;
    return {
      type: "model_call",
      payload: {
        messageId: call.id,
        model: call.model ?? model ?? "unknown",
        inputTokens: u.input_tokens ?? 0,
        outputTokens: u.output_tokens ?? 0,
        cacheReadTokens: u.cache_read_input_tokens ?? 0,
        cacheWriteTokens: u.cache_creation_input_tokens ?? 0,
        startedAt: new Date(call.startedAtMs).toISOString(),
        durationMs: Math.max(0, call.lastAtMs - call.startedAtMs),
        ...(call.subagentId ? { subagentId: call.subagentId } : {}),
      },
    };
  }

  /** The model call of one scope is complete: its event, once. */
  function endCall(scope: string, atMs: number): AgentEvent[] {
    const call = pendingCalls.get(scope);
    if (!call) return [];
    pendingCalls.delete(scope);
    inputAtMs.set(scope, atMs);
    return [modelCall(call)];
  }

  function endAllCalls(atMs: number): AgentEvent[] {
    return [...pendingCalls.keys()].flatMap((scope) => endCall(scope, atMs));
  }

  function costFromUsage(usage: Usage, priced: Priced, basis: "cli" | "price_table"): AgentEvent {
    return {
      type: "cost",
      payload: {
        // Uncached input only: the attempt's total adds the cache reads and writes (recordAttemptCost).
        inputTokens: usage.input_tokens ?? 0,
        outputTokens: usage.output_tokens ?? 0,
        cacheReadTokens: usage.cache_read_input_tokens ?? 0,
        cacheWriteTokens: usage.cache_creation_input_tokens ?? 0,
        ...(priced.kind === "priced" ? { usd: priced.usd, usdBasis: basis } : { unpricedModel: truncateText(priced.model ?? "an unnamed model", 200) }),
        ...(model ? { model } : {}),
      },
    };
  }

  const tokensOf = (u: Usage) => ({
    inputTokens: u.input_tokens ?? 0,
    outputTokens: u.output_tokens ?? 0,
    cacheReadTokens: u.cache_read_input_tokens ?? 0,
    cacheWriteTokens: u.cache_creation_input_tokens ?? 0,
  });

  function runningTotal(): Usage {
    const total = { input_tokens: 0, output_tokens: 0, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 };
    for (const { usage: u } of usageByMessage.values()) {
      total.input_tokens += u.input_tokens ?? 0;
      total.output_tokens += u.output_tokens ?? 0;
      total.cache_read_input_tokens += u.cache_read_input_tokens ?? 0;
      total.cache_creation_input_tokens += u.cache_creation_input_tokens ?? 0;
    }
    return total;
  }

  /** The running estimate: each message priced by the model that answered it. */
  const runningCost = (): Priced => sumPriced([...usageByMessage.values()].map((m) => priceUsage(m.model ?? model, tokensOf(m.usage))));

  function system(msg: z.infer<typeof zSystem>): AgentEvent[] {
    sessionId = msg.session_id ?? sessionId;
    if (msg.subtype !== "init") {
      if (quietSystemSubtypes.has(msg.subtype)) return [];
      if (msg.subtype === "hook_response") {
        const h = msg as { hook_name?: unknown; hook_event?: unknown; stdout?: unknown; stderr?: unknown; exit_code?: unknown };
        const out = [h.stdout, h.stderr].filter((x): x is string => typeof x === "string" && x.trim() !== "").join("\n");
        const name = [h.hook_event, h.hook_name].filter((x) => typeof x === "string").join(" ");
        return [{ type: "log", payload: { stream: "system", text: truncateText(`Claude Code hook ${name || "(unnamed)"}${typeof h.exit_code === "number" ? ` exited ${h.exit_code}` : ""}${out ? `:\n${out}` : ""}`) } }];
      }
      return [{ type: "log", payload: { stream: "system", text: `Claude Code: ${msg.subtype}` } }];
    }
    model = msg.model ?? model;
    sessionStartMs ??= at().getTime();
    const parts = ["Claude Code session started"];
    if (msg.model) parts.push(`model \`${msg.model}\``);
    if (msg.tools) parts.push(`${msg.tools.length} tools (${msg.tools.join(", ")})`);
    if (msg.mcp_servers?.length) {
      parts.push(`MCP: ${msg.mcp_servers.map((s) => (s.status ? `${s.name} (${s.status})` : s.name)).join(", ")}`);
    }
    return [{ type: "message", payload: { role: "system", text: parts.join(" · ") } }];
  }

  function assistant(msg: z.infer<typeof zMessageLine>): AgentEvent[] {
    const subagentId = msg.parent_tool_use_id ?? undefined;
    const scope = subagentId ? { subagentId } : {};
    const atMs = at().getTime();
    // A new message in this scope ends the one before it: that call's event comes first.
    const callScope = subagentId ?? "";
    const messageId = msg.message.id;
    const events: AgentEvent[] = messageId && pendingCalls.get(callScope)?.id !== messageId ? endCall(callScope, pendingCalls.get(callScope)?.lastAtMs ?? atMs) : [];
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
      const thinking = zThinkingBlock.safeParse(raw);
      if (thinking.success) {
        if (thinking.data.thinking.trim()) events.push({ type: "thinking", payload: { text: truncateText(thinking.data.thinking), ...scope } });
        continue;
      }
      const use = zToolUseBlock.safeParse(raw);
      if (!use.success) continue; // redacted thinking, images, server tools: not part of the transcript
      toolCalls.set(use.data.id, { startedAtMs: atMs });
      events.push({
        type: "tool_call",
        payload: { id: use.data.id, name: use.data.name, input: use.data.input ?? {}, startedAt: new Date(atMs).toISOString(), ...scope },
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
    if (messageId) {
      const call = pendingCalls.get(callScope);
      if (call) {
        call.lastAtMs = atMs;
        if (msg.message.usage) call.usage = msg.message.usage;
      } else {
        const startedAtMs = inputAtMs.get(callScope) ?? (subagentId ? undefined : sessionStartMs) ?? atMs;
        pendingCalls.set(callScope, { id: messageId, model: msg.message.model ?? model, usage: msg.message.usage ?? {}, startedAtMs, lastAtMs: atMs, ...scope });
      }
    }
    // A message's usage repeats on every line of it; count each message once, latest usage wins.
    if (messageId && msg.message.usage) {
      const first = !usageByMessage.has(messageId);
      usageByMessage.set(messageId, { usage: msg.message.usage, model: msg.message.model ?? model });
      if (first) events.push(costFromUsage(runningTotal(), runningCost(), "price_table"));
    }
    return events;
  }

  function user(msg: z.infer<typeof zMessageLine>): AgentEvent[] {
    const subagentId = msg.parent_tool_use_id ?? undefined;
    const scope = subagentId ? { subagentId } : {};
    // A user line (a prompt or tool results) ends the scope's model call and is the next one's input.
    const atMs = at().getTime();
    const ended = endCall(subagentId ?? "", atMs);
    inputAtMs.set(subagentId ?? "", atMs);
    // Inside a subagent, a user message is the prompt its parent handed it, not a person.
    const said = (text: string): AgentEvent =>
      subagentId
        ? { type: "message", payload: { role: "system", text: truncateText(`Prompt from the parent agent to ${subagents.get(subagentId)?.name ?? "the subagent"}:\n\n${text}`), ...scope } }
        : { type: "message", payload: { role: "user", text: truncateText(text) } };
    if (typeof msg.message.content === "string") return [...ended, said(msg.message.content)];
    const events: AgentEvent[] = [...ended];
    for (const raw of msg.message.content) {
      const text = zTextBlock.safeParse(raw);
      if (text.success) {
        events.push(said(text.data.text));
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
          ...(call ? { durationMs: Math.max(0, atMs - call.startedAtMs) } : {}),
          ...scope,
        },
      });
      const sub = subagents.get(toolCallId);
      if (sub) {
        subagents.delete(toolCallId);
        events.push(...endCall(toolCallId, atMs));
        inputAtMs.delete(toolCallId);
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
    // Any subtype but success is a failure, whatever is_error says (error_during_execution comes
    // with is_error: false); so is a success the CLI itself flags as an error (an API error).
    const isError = msg.is_error === true || msg.subtype !== "success";
    const errors = (msg.errors ?? []).map((e) => truncateText(e, 1000)).slice(0, 20);
    outcome = { isError, subtype: msg.subtype, errors, ...(msg.result !== undefined ? { text: msg.result } : {}) };
    const events: AgentEvent[] = endAllCalls(at().getTime());
    for (const d of msg.permission_denials ?? []) {
      events.push({ type: "permission_denied", payload: { toolName: d.tool_name, ...(d.tool_use_id ? { toolCallId: d.tool_use_id } : {}), input: d.tool_input ?? {} } });
    }
    // The CLI's own totals: modelUsage covers every model (subagents, side requests); the result's
    // usage is the main conversation only.
    const models = Object.entries(msg.modelUsage ?? {});
    const usage: Usage | undefined =
      models.length > 0
        ? {
            input_tokens: sum(models.map(([, u]) => u.inputTokens)),
            output_tokens: sum(models.map(([, u]) => u.outputTokens)),
            cache_read_input_tokens: sum(models.map(([, u]) => u.cacheReadInputTokens)),
            cache_creation_input_tokens: sum(models.map(([, u]) => u.cacheCreationInputTokens)),
          }
        : (msg.usage ?? (usageByMessage.size > 0 ? runningTotal() : undefined));
    const usd = msg.total_cost_usd ?? (models.length > 0 && models.every(([, u]) => u.costUSD !== undefined) ? sum(models.map(([, u]) => u.costUSD)) : undefined);
    if (models.length > 1) model = models.map(([m]) => m).join(", ");
    if (usd !== undefined) outcome.usd = usd;
    // The CLI's own dollars replace the estimate; without them, the estimate stands (per model).
    const priced: Priced | undefined =
      usd !== undefined
        ? { kind: "priced", usd }
        : models.length > 0
          ? sumPriced(models.map(([m, u]) => priceUsage(m, { inputTokens: u.inputTokens ?? 0, outputTokens: u.outputTokens ?? 0, cacheReadTokens: u.cacheReadInputTokens ?? 0, cacheWriteTokens: u.cacheCreationInputTokens ?? 0 })))
          : usage
            ? usageByMessage.size > 0 && !msg.usage
              ? runningCost()
              : priceUsage(model, tokensOf(usage))
            : undefined;
    if (priced) events.push(costFromUsage(usage ?? {}, priced, usd !== undefined ? "cli" : "price_table"));
    if (isError) {
      const detail = [...errors, ...(msg.result ? [truncateText(msg.result, 2000)] : [])].join("\n");
      // A "success" flagged is_error is an API error the CLI gave up on: say so, not "success".
      const how = msg.subtype === "success" ? "an error" : msg.subtype;
      events.push({ type: "log", payload: { stream: "system", text: `Claude Code finished with ${how}${detail ? `:\n${detail}` : ""}` } });
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
      lineAt = undefined;
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

const sum = (xs: (number | undefined)[]) => xs.reduce<number>((a, x) => a + (x ?? 0), 0);

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
