import {
  type AgentEvent,
  isAgentEventType,
  isRunEventType,
  safeValidateAgentEvent,
  truncateText,
} from "@/server/domain/events/catalogue";
import { boundJson, cutMarker, formatSize } from "@/server/lib/text-boundary";
import { eventPayloadLimits, maxEventTextChars } from "@/server/domain/events/catalogue";
import { createClaudeStreamParser, type ClaudeOutcome } from "./claude-stream-json";
import type { LineKind } from "./line-splitter";

// Decodes an agent's stdout, one line at a time, detecting the format per line:
// Airlock's own events ({"type": "<catalogue type>", "payload": {...}}), Claude
// Code's stream-json messages, or anything else (kept as a log line). An agent
// may only emit agent events: a line claiming to be a status change, an approval
// or a write-back is shown as text, never trusted.

export type OutputFormat = "auto" | "airlock" | "claude-stream-json";

export type OutputDecoder = {
  /** `cutBytes`: for an oversized line, the UTF-8 bytes the splitter left out. */
  decodeLine(line: string, kind?: LineKind, cutBytes?: number): AgentEvent[];
  readonly externalSessionId: string | undefined;
  readonly claudeOutcome: ClaudeOutcome | undefined;
};

// Artifacts are reported by the adapter from the artifacts folder, with digests it computed.
const notFromStdout = new Set(["artifact_produced"]);

const log = (stream: "stdout" | "stderr" | "system", text: string): AgentEvent => ({
  type: "log",
  payload: { stream, text: truncateText(text) },
});

export function createOutputDecoder(options: { format?: OutputFormat; now?: () => Date } = {}): OutputDecoder {
  const format = options.format ?? "auto";
  const claude = createClaudeStreamParser({ now: options.now });

  function decodeJson(value: unknown, line: string): AgentEvent[] | null {
    if (format !== "airlock") {
      const events = claude.parse(value);
      if (events) return events;
    }
    if (format === "claude-stream-json") return null;
    const type = (value as { type?: unknown }).type;
    if (!isRunEventType(type)) return null;
    if (notFromStdout.has(type)) {
      return [log("stdout", line), log("system", `Ignored a ${type} event from the agent: write the file to the artifacts folder instead`)];
    }
    if (!isAgentEventType(type)) {
      return [log("stdout", line), log("system", `Ignored a ${type} event from the agent: Airlock records these itself`)];
    }
    const result = safeValidateAgentEvent(value);
    if (result.ok) return [result.event];
    return [log("stdout", line), log("system", `Ignored an invalid ${type} event from the agent (${result.error})`)];
  }

  return {
    decodeLine(line, kind = "line", cutBytes = 0) {
      if (kind === "oversized") {
        // Shown as text, never parsed: half a JSON line is not the event its author meant.
        // Room for the marker inside the event's bound, so the marker itself is never cut.
        const shown = line.slice(0, maxEventTextChars - 100);
        const hidden = Buffer.byteLength(line.slice(shown.length), "utf8") + cutBytes;
        return [log("stdout", `${shown}${cutMarker(`${formatSize(hidden)} of a line too long to keep`)}`)];
      }
      const trimmed = line.trim();
      if (!trimmed) return [];
      if (trimmed.startsWith("{")) {
        let value: unknown;
        try {
          // JSON.parse itself is iterative; the bound makes the value safe for every recursive
          // walk after it (zod, redaction, JSON.stringify), whatever its depth or size.
          value = boundJson(JSON.parse(trimmed), eventPayloadLimits).value;
        } catch {
          value = undefined;
        }
        if (typeof value === "object" && value !== null) {
          const events = decodeJson(value, line);
          if (events) return events;
        }
      }
      return [log("stdout", line)];
    },
    get externalSessionId() {
      return claude.sessionId;
    },
    get claudeOutcome() {
      return claude.outcome;
    },
  };
}
