import { type SandboxBlocked, type SandboxEnded, type SandboxMetered, type SandboxStarted, zSandboxPayload } from "./events";

// The run view's read of an attempt's sandbox: what it enforced, the connections it refused and
// how it ended, from the attempt's `sandbox` events. Pure.

export type AttemptSandboxView = {
  started: SandboxStarted | null;
  blocked: SandboxBlocked[];
  /** More blocked connections than are listed. */
  blockedTotal: number;
  ended: SandboxEnded | null;
  /** The model usage Airlock's gateway saw, latest (cumulative) report; null when none passed it. */
  metered: SandboxMetered | null;
};

export const maxBlockedShown = 100;

export function sandboxViews(events: { attemptId: string | null; payload: unknown }[]): Record<string, AttemptSandboxView> {
  const views: Record<string, AttemptSandboxView> = {};
  for (const e of events) {
    if (!e.attemptId) continue;
    const parsed = zSandboxPayload.safeParse(e.payload);
    if (!parsed.success) continue;
    const view = (views[e.attemptId] ??= { started: null, blocked: [], blockedTotal: 0, ended: null, metered: null });
    const p = parsed.data;
    if (p.phase === "started") view.started = p;
    else if (p.phase === "ended") view.ended = p;
    else if (p.phase === "metered") view.metered = p;
    else {
      view.blockedTotal++;
      if (view.blocked.length < maxBlockedShown) view.blocked.push(p);
    }
  }
  for (const v of Object.values(views)) v.blockedTotal = Math.max(v.blockedTotal, v.ended?.blockedConnections ?? 0);
  return views;
}
