// What a model's tokens cost: Airlock's own price table, the one place a dollar figure is
// computed from tokens. The Claude Code parser prices each assistant message with it while the
// attempt runs (the CLI reports dollars only in its final result, which then replaces the
// estimate), and the runner prices an agent's own cost events that carry tokens but no dollars.
// A model the table does not know is priced as unknown, never as $0: the attempt says so, and
// Airlock's meter cannot hold that attempt to its cap (the UI and the transcript say that too).
// Pure, no I/O.

/** US dollars per million tokens. */
export type ModelPrice = { input: number; output: number; cacheRead: number; cacheWrite: number };

export type TokenUsage = { inputTokens: number; outputTokens: number; cacheReadTokens?: number; cacheWriteTokens?: number };

// The Claude API list prices (anthropic.com/pricing), cache writes at the 5-minute rate; Sonnet's
// long-context surcharge (prompts over 200k tokens) is not modelled, so such a turn is under-estimated
// until the CLI's own total arrives.
const prices: Record<string, ModelPrice> = {
  "claude-opus-4-5": { input: 5, output: 25, cacheRead: 0.5, cacheWrite: 6.25 },
  "claude-opus-4-1": { input: 15, output: 75, cacheRead: 1.5, cacheWrite: 18.75 },
  "claude-opus-4": { input: 15, output: 75, cacheRead: 1.5, cacheWrite: 18.75 },
  "claude-sonnet-4-5": { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 },
  "claude-sonnet-4": { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 },
  "claude-3-7-sonnet": { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 },
  "claude-haiku-4-5": { input: 1, output: 5, cacheRead: 0.1, cacheWrite: 1.25 },
  "claude-3-5-haiku": { input: 0.8, output: 4, cacheRead: 0.08, cacheWrite: 1 },
  "claude-3-haiku": { input: 0.25, output: 1.25, cacheRead: 0.03, cacheWrite: 0.3 },
};
// Longest first, so "claude-sonnet-4-5-20250929" is Sonnet 4.5, not Sonnet 4.
const families = Object.keys(prices).sort((a, b) => b.length - a.length);

/**
 * The price of a model id as the API names it: a family above, optionally with its date
 * ("claude-sonnet-4-20250514") or Bedrock/Vertex dressing ("us.anthropic.claude-…-v1:0",
 * "claude-…@20250514"). Anything else (another family, a gateway's alias) is unknown.
 */
export function priceOf(model: string): ModelPrice | undefined {
  const id = model
    .trim()
    .toLowerCase()
    .replace(/^(?:[a-z]{2}\.)?anthropic\./, "")
    .replace(/(?:-v\d+(?::\d+)?|@\d{8})$/, "");
  const family = families.find((f) => id === f || new RegExp(`^${f.replaceAll(".", "\\.")}-\\d{8}$`).test(id));
  return family ? prices[family] : undefined;
}

export type Priced = { kind: "priced"; usd: number } | { kind: "unknown"; model: string | null };

/** The dollars for `usage` on `model`; unknown (never 0) when the model has no price. */
export function priceUsage(model: string | null | undefined, usage: TokenUsage): Priced {
  const price = model ? priceOf(model) : undefined;
  if (!price) return { kind: "unknown", model: model ?? null };
  const usd =
    (usage.inputTokens * price.input +
      usage.outputTokens * price.output +
      (usage.cacheReadTokens ?? 0) * price.cacheRead +
      (usage.cacheWriteTokens ?? 0) * price.cacheWrite) /
    1_000_000;
  return { kind: "priced", usd };
}

/** Sums priced parts; unknown as soon as one part is, naming every unpriced model once. */
export function sumPriced(parts: Priced[]): Priced {
  const unknown = [...new Set(parts.flatMap((p) => (p.kind === "unknown" ? [p.model ?? "an unnamed model"] : [])))];
  if (unknown.length > 0) return { kind: "unknown", model: unknown.join(", ") };
  return { kind: "priced", usd: parts.reduce((n, p) => n + (p.kind === "priced" ? p.usd : 0), 0) };
}

/** "$0.5123": four decimals, as the budget figures are shown. */
export const formatBudgetUsd = (usd: number) => `$${usd.toFixed(4)}`;
