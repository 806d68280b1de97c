import type { Db } from "@/server/db";
import type { ApprovalStatus } from "@/server/db/generated/enums";
import { Mailbox, type MailboxLimits } from "./mailbox";
import { sseFrame } from "./sse";

// Changes to approval requests for /approvals, from the same run-event notifications as the run
// streams: every request, decision and write-back outcome appends an event to its run. Runs
// touched in the last window are read once (their requests, one query for all) and a request
// that is new or whose status changed is sent to every queue viewer allowed to see its
// repository. A run streaming its transcript costs one cheap query per window, no frames.

export type ApprovalChange = { id: string; runId: string; repositoryId: string; status: ApprovalStatus };

export class ApprovalSubscription extends Mailbox<{ bytes: Uint8Array }> {
  constructor(
    readonly visible: ReadonlySet<string> | "all",
    limits: MailboxLimits,
    onClose: (sub: ApprovalSubscription) => void,
  ) {
    super(limits, () => onClose(this));
  }

  sees(repositoryId: string) {
    return this.visible === "all" || this.visible.has(repositoryId);
  }
}

const encoder = new TextEncoder();
const resyncFrame = { bytes: encoder.encode(sseFrame({ event: "resync", data: "{}" })) };
const maxRemembered = 10_000;

export class ApprovalFeed {
  private readonly subs = new Set<ApprovalSubscription>();
  private readonly pending = new Set<string>();
  private readonly lastStatus = new Map<string, ApprovalStatus>();
  private timer: NodeJS.Timeout | null = null;
  private flushing = false;

  constructor(private readonly opts: { db: Db; windowMs: number; log?: (line: string) => void }) {}

  get size() {
    return this.subs.size;
  }

  subscribe(visible: string[] | "all", limits: MailboxLimits): ApprovalSubscription {
    const sub = new ApprovalSubscription(visible === "all" ? "all" : new Set(visible), limits, (s) => this.subs.delete(s));
    this.subs.add(sub);
    return sub;
  }

  /** A run had new events: its approval requests may have changed. */
  touch(runId: string) {
    if (this.subs.size === 0) return;
    this.pending.add(runId);
    if (this.timer) return;
    this.timer = setTimeout(() => void this.flush(), this.opts.windowMs);
    this.timer.unref();
  }

  /** Notifications may have been missed: every queue viewer reloads. */
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
      const rows = await this.opts.db.approvalRequest.findMany({
        where: { runId: { in: ids } },
        select: { id: true, runId: true, status: true, run: { select: { repositoryId: true } } },
      });
      if (this.lastStatus.size > maxRemembered) this.lastStatus.clear();
      for (const row of rows) {
        if (this.lastStatus.get(row.id) === row.status) continue;
        this.lastStatus.set(row.id, row.status);
        const change: ApprovalChange = { id: row.id, runId: row.runId, repositoryId: row.run.repositoryId, status: row.status };
        const frame = { bytes: encoder.encode(sseFrame({ event: "approval", data: JSON.stringify(change) })) };
        for (const sub of [...this.subs]) if (sub.sees(change.repositoryId)) sub.put([frame]);
      }
    } catch (err) {
      this.opts.log?.(`reading approval requests failed: ${err instanceof Error ? err.message : String(err)}`);
      this.resync();
    } finally {
      this.flushing = false;
    }
  }
}
