// Parsing "@agent <command>" out of a PR comment.
import type { BotCommand } from "@/server/domain/ci-events/ci-event";

export const DEFAULT_BOT_HANDLE = "@agent";

/** Command phrases, longest first so "fix failing checks" is tried before "fix failing check". */
const COMMAND_PHRASES: ReadonlyArray<readonly [phrase: string, command: BotCommand]> = [
  ["fix failing checks", "fix_failing_check"],
  ["fix failing check", "fix_failing_check"],
  ["diagnose", "diagnose"],
  ["triage", "triage"],
  ["cancel", "cancel"],
];

export type ParsedCommand =
  | { kind: "command"; command: BotCommand; args: string; line: number }
  | { kind: "unknown"; text: string; line: number }
  | { kind: "none" };

/**
 * Find the first line addressed to the bot. A command must start its line (leading spaces
 * allowed), so quoted replies ("> @agent diagnose"), inline mentions and fenced code blocks never
 * dispatch. The handle matches case-insensitively and must be followed by a space or the line end
 * ("@agentsmith" is someone else).
 */
export function parseBotCommand(body: string, handle: string = DEFAULT_BOT_HANDLE): ParsedCommand {
  const wanted = normaliseHandle(handle);
  let inFence = false;
  const lines = body.split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    const line = (lines[i] ?? "").trim();
    if (line.startsWith("```") || line.startsWith("~~~")) {
      inFence = !inFence;
      continue;
    }
    if (inFence) continue;
    if (!line.toLowerCase().startsWith(wanted)) continue;
    const rest = line.slice(wanted.length);
    if (rest !== "" && !/^\s/.test(rest)) continue;
    const text = rest.trim().replace(/\s+/g, " ");
    const lower = text.toLowerCase();
    for (const [phrase, command] of COMMAND_PHRASES) {
      if (lower === phrase || lower.startsWith(`${phrase} `)) {
        return { kind: "command", command, args: text.slice(phrase.length).trim(), line: i + 1 };
      }
    }
    return { kind: "unknown", text, line: i + 1 };
  }
  return { kind: "none" };
}

export function normaliseHandle(handle: string): string {
  const h = handle.trim().toLowerCase();
  return h.startsWith("@") ? h : `@${h}`;
}

export const KNOWN_COMMAND_PHRASES = ["diagnose", "fix failing check", "triage", "cancel"] as const;
