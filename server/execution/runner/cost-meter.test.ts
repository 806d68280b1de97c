import { describe, expect, it } from "vitest";
import { createCostMeter } from "./cost-meter";

// The meter holds an attempt to its cap from whichever figure is higher: the agent's own
// report, or the model API's usage as Airlock's model gateway read it.

const metered = (inputTokens: number, outputTokens = 0) => ({ phase: "metered" as const, calls: 1, models: [{ model: "claude-sonnet-4-5", inputTokens, outputTokens, cacheReadTokens: 0, cacheWriteTokens: 0 }] });

describe("cost meter", () => {
  it("hostile: an agent that reports $0 is still stopped at the cap by the gateway's figures", () => {
    const meter = createCostMeter({ capUsd: 0.5 });
    expect(meter.observe({ inputTokens: 0, outputTokens: 0, usd: 0 }).over).toBeUndefined();
    // 200,000 input tokens on Sonnet 4.5: $0.60 by the price table.
    const { over } = meter.observeMetered(metered(200_000));
    expect(over).toBe("Cost cap reached: stopped at $0.6000 of the $0.5000 cap (Airlock's meter stopped the session, metered by Airlock's model gateway from the model API's own usage)");
    expect(meter.stopped).toBe(over);
    // Said once: a later reading does not stop it again.
    expect(meter.observeMetered(metered(400_000)).over).toBeUndefined();
  });

  it("below the cap, or with no cap, the gateway's figures stop nothing", () => {
    expect(createCostMeter({ capUsd: 5 }).observeMetered(metered(200_000)).over).toBeUndefined();
    expect(createCostMeter({ capUsd: 0 }).observeMetered(metered(10_000_000)).over).toBeUndefined();
  });

  it("an unpriced model's usage is left to the agent's figures (never counted as $0)", () => {
    const meter = createCostMeter({ capUsd: 0.01 });
    expect(meter.observeMetered({ phase: "metered", calls: 1, models: [{ model: "someone-elses-model", inputTokens: 10_000_000, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 }] }).over).toBeUndefined();
    expect(meter.endedAtCap()).toBeUndefined();
  });
});
