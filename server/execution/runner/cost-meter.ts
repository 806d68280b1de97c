import type { AgentEvent } from "@/server/domain/events/catalogue";
import { formatBudgetUsd, priceUsage, sumPriced } from "@/server/execution/agents/pricing";
import type { SandboxMetered } from "@/server/execution/sandbox/events";

// Airlock's own cost meter for one attempt, for every adapter that reports usage: each cost
// event (cumulative totals) gets its dollars (the agent's own, the CLI's, or the price table's
// estimate; unknown for a model without a price) and is checked against the stack's cap. At
// the cap the runner stops the session and the attempt fails with the figures; a failed attempt
// is never retried automatically (run-engine/finish-attempt.ts), so no retry spends more. Where the model
// calls pass Airlock's model gateway, the gateway's figures (the model API's own usage, priced
// by the table) are held to the cap too: whichever is higher counts, so an agent that reports
// less than it spends is still stopped. Pure.

type CostPayload = Extract<AgentEvent, { type: "cost" }>["payload"];

export type MeterReading = {
  /** The event as stored: with usd and its basis, or the unpriced model. */
  payload: CostPayload;
  /** Lines for the transcript (said once each). */
  notes: AgentEvent[];
  /** Set once the cap is reached: the attempt's end reason. */
  over?: string;
};

export function createCostMeter(opts: { capUsd: number }) {
  const cap = opts.capUsd;
  let last: { usd: number; basis: string } | undefined;
  let warnedUnknown = false;
  let over: string | undefined;
  const meteredBasis = "metered by Airlock's model gateway from the model API's own usage";

  const reason = (usd: number, basis: string, by: string) =>
    `Cost cap reached: stopped at ${formatBudgetUsd(usd)} of the ${formatBudgetUsd(cap)} cap (${by}, ${basis})`;
  const basisText = (basis: string | undefined) =>
    basis === "cli" ? "the CLI's own total" : basis === "price_table" ? "estimated from Airlock's price table" : "as the agent reported it";

  return {
    observe(event: CostPayload): MeterReading {
      const notes: AgentEvent[] = [];
      let payload = event;
      if (payload.usd === undefined && payload.unpricedModel === undefined) {
        const priced = priceUsage(payload.model, payload);
        payload = priced.kind === "priced" ? { ...payload, usd: priced.usd, usdBasis: "price_table" } : { ...payload, unpricedModel: priced.model ?? "an unnamed model" };
      } else if (payload.usd !== undefined && payload.usdBasis === undefined) {
        payload = { ...payload, usdBasis: "agent" };
      }
      if (payload.usd === undefined) {
        if (cap > 0 && !warnedUnknown) {
          warnedUnknown = true;
          notes.push({
            type: "log",
            payload: { stream: "system", text: `Cost unknown: Airlock has no price for ${payload.unpricedModel}, so its meter cannot hold this attempt to the ${formatBudgetUsd(cap)} cap.` },
          });
        }
        return { payload, notes };
      }
      last = { usd: payload.usd, basis: payload.usdBasis ?? "agent" };
      if (cap > 0 && over === undefined && payload.usd >= cap) {
        over = reason(payload.usd, basisText(payload.usdBasis), "Airlock's meter stopped the session");
        return { payload, notes, over };
      }
      return { payload, notes };
    },
    /** The gateway's cumulative report: at the cap, the reason to stop (once). Unpriced models are left to the agent's figures. */
    observeMetered(report: SandboxMetered): { over?: string } {
      const priced = sumPriced(report.models.map((m) => priceUsage(m.model, m)));
      if (priced.kind !== "priced") return {};
      if (cap > 0 && over === undefined && priced.usd >= cap) {
        over = reason(priced.usd, meteredBasis, "Airlock's meter stopped the session");
        return { over };
      }
      return {};
    },
    /** The budget reason for an attempt that ended failed at or past the cap by the agent's own stop. */
    endedAtCap(): string | undefined {
      if (over) return over;
      if (cap > 0 && last && last.usd >= cap) return reason(last.usd, basisText(last.basis), "the agent stopped itself");
      return undefined;
    },
    get stopped() {
      return over;
    },
  };
}
