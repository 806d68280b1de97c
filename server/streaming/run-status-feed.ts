import type { Db } from "@/server/db";
import type { RunStatus } from "@/server/db/generated/enums";
import { Mailbox, type MailboxLimits } from "./mailbox";
import { sseFrame } from "./sse";

// Status changes for the runs list, from the same notifications as the run
// streams: runs that had events in the last window are read once (one query
// for all of them) and the ones whose status changed are sent to every list
// viewer allowed to see their repository.

export type StatusFrame = { bytes: Uint8Array };

export class StatusSubscription extends Mailbox<StatusFrame> {
  constructor(
    readonly visible: ReadonlySet<string> | "all",
    limits: MailboxLimits,
    onClose: (sub: StatusSubscription) => void,
  ) {
    super(limits, () => onClose(this));
  }

  sees(repositoryId: string) {
    return this.visible === "all" || this.visible.has(repositoryId);
  }
}

export type RunStatusChange = { id: string; status: RunStatus; repositoryId: string; lastEventSeq: number; updatedAt: string };

const encoder = new TextEncoder();
const resyncFrame = { bytes: encoder.encode(sseFrame({ event: "resync", data: "{}" })) };
/** Remember this many statuses; past it the memory is cleared (costs one redundant frame per run). */
const maxRemembered = 10_000;

export class RunStatusFeed {
  private readonly subs = new Set<StatusSubscription>();
  private readonly pending = new Set<string>();
  private readonly lastStatus = new Map<string, RunStatus>();
  private timer: NodeJS.Timeout | null = null;
  private flushing = false;

  constructor(private readonly opts: { db: Db; windowMs: number; log?: (line: string) => void }) {}

  get size() {
    return this.subs.size;
  }

  subscribe(visible: string[] | "all", limits: MailboxLimits): StatusSubscription {
    const sub = new StatusSubscription(visible === "all" ? "all" : new Set(visible), limits, (s) => this.subs.delete(s));
    this.subs.add(sub);
    return sub;
  }

  /** A run had new events: its status may have changed. */
  touch(runId: string) {
    if (this.subs.size === 0) return;
    this.pending.add(runId);
    if (this.timer) return;
    this.timer = setTimeout(() => void this.flush(), this.opts.windowMs);
    this.timer.unref();
  }

  /** Notifications may have been missed: every list viewer reloads. */
  resync() {
    for (const sub of [...this.subs]) sub.put([resyncFrame]);
  }

  stop() {
    if (this.timer) clearTimeout(this.timer);
    for (const sub of [...this.subs]) sub.close("shutdown");
  }

  private async flush() {
    this.timer = null;
    if (this.flushing) {
      this.timer = setTimeout(() => void this.flush(), this.opts.windowMs);
      return;
    }
    const ids = [...this.pending];
    this.pending.clear();
    if (ids.length === 0 || this.subs.size === 0) return;
    this.flushing = true;
    try {
      const rows = await this.opts.db.agentDispatchRun.findMany({
        where: { id: { in: ids } },
        select: { id: true, status: true, repositoryId: true, lastEventSeq: true, updatedAt: true },
      });
      if (this.lastStatus.size > maxRemembered) this.lastStatus.clear();
      for (const row of rows) {
        if (this.lastStatus.get(row.id) === row.status) continue;
        this.lastStatus.set(row.id, row.status);
        const change: RunStatusChange = { ...row, updatedAt: row.updatedAt.toISOString() };
        const frame = { bytes: encoder.encode(sseFrame({ event: "run", data: JSON.stringify(change) })) };
        for (const sub of [...this.subs]) if (sub.sees(row.repositoryId)) sub.put([frame]);
      }
    } catch (err) {
      this.opts.log?.(`reading run statuses failed: ${err instanceof Error ? err.message : String(err)}`);
      this.resync();
    } finally {
      this.flushing = false;
    }
  }
}
