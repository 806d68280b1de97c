import { describe, expect, it } from "vitest";
import { createClaudeStreamParser } from "./claude-stream-json";
import { priceOf, priceUsage, sumPriced } from "./pricing";

describe("price table", () => {
  it("prices input, output, cache reads and cache writes each at its own rate", () => {
    const p = priceUsage("claude-sonnet-4-5", { inputTokens: 1_000_000, outputTokens: 1_000_000, cacheReadTokens: 1_000_000, cacheWriteTokens: 1_000_000 });
    expect(p).toEqual({ kind: "priced", usd: 3 + 15 + 0.3 + 3.75 });
    expect(priceUsage("claude-opus-4-5", { inputTokens: 2_000_000, outputTokens: 0 })).toEqual({ kind: "priced", usd: 10 });
    expect(priceUsage("claude-haiku-4-5", { inputTokens: 0, outputTokens: 1_000_000, cacheReadTokens: 1_000_000 })).toEqual({ kind: "priced", usd: 5.1 });
  });

  it("knows a dated id as its family, and the longest family first", () => {
    expect(priceOf("claude-sonnet-4-5-20250929")).toEqual(priceOf("claude-sonnet-4-5"));
    expect(priceOf("claude-sonnet-4-20250514")?.input).toBe(3);
    expect(priceOf("claude-opus-4-1-20250805")?.output).toBe(75);
    expect(priceOf("claude-opus-4-5-20251101")?.output).toBe(25);
    expect(priceOf("us.anthropic.claude-haiku-4-5-20251001-v1:0")?.input).toBe(1);
    expect(priceOf("claude-3-5-haiku@20241022")?.input).toBe(0.8);
  });

  it("says unknown for a model it has no price for, never $0", () => {
    expect(priceUsage("gpt-5", { inputTokens: 10, outputTokens: 10 })).toEqual({ kind: "unknown", model: "gpt-5" });
    expect(priceUsage(undefined, { inputTokens: 10, outputTokens: 10 })).toEqual({ kind: "unknown", model: null });
    // A near miss is not a family: no guessing from a prefix.
    expect(priceOf("claude-sonnet-4-5-turbo")).toBeUndefined();
    expect(priceOf("claude-sonnet")).toBeUndefined();
    expect(sumPriced([{ kind: "priced", usd: 1 }, { kind: "unknown", model: "x" }, { kind: "unknown", model: "x" }])).toEqual({ kind: "unknown", model: "x" });
    expect(sumPriced([{ kind: "priced", usd: 1 }, { kind: "priced", usd: 0.5 }])).toEqual({ kind: "priced", usd: 1.5 });
  });

  it("the Claude parser prices each message by the model that answered it, and names an unpriced one", () => {
    const parser = createClaudeStreamParser();
    const line = (id: string, model: string, usage: object) => ({ type: "assistant", message: { id, model, content: [{ type: "text", text: "hi" }], usage } });
    const first = parser.parse(line("m1", "claude-sonnet-4-5", { input_tokens: 1000, output_tokens: 100 }))!;
    expect(first.find((e) => e.type === "cost")?.payload).toMatchObject({ usd: (1000 * 3 + 100 * 15) / 1e6, usdBasis: "price_table" });
    const second = parser.parse({ ...line("m2", "claude-haiku-4-5", { input_tokens: 1000, output_tokens: 100 }), parent_tool_use_id: "toolu_1" })!;
    expect(second.find((e) => e.type === "cost")?.payload).toMatchObject({ usd: expect.closeTo((1000 * 3 + 100 * 15 + 1000 * 1 + 100 * 5) / 1e6, 12) });
    const third = parser.parse(line("m3", "my-gateway-model", { input_tokens: 1, output_tokens: 1 }))!;
    const cost = third.find((e) => e.type === "cost")?.payload as { usd?: number; unpricedModel?: string };
    expect(cost.usd).toBeUndefined();
    expect(cost.unpricedModel).toBe("my-gateway-model");
    // The CLI's own dollars at the end replace the estimate, known or not.
    const end = parser.parse({ type: "result", subtype: "success", total_cost_usd: 0.25, usage: { input_tokens: 2001, output_tokens: 201 } })!;
    expect(end.find((e) => e.type === "cost")?.payload).toMatchObject({ usd: 0.25, usdBasis: "cli" });
  });
});
