import { Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import { getDb, transaction } from "@/server/db";
import { appendRunEvents } from "@/server/domain/events/append";
import { recordAudit } from "@/server/domain/audit";
import { createRepository, createRun } from "@/server/testing/factories";
import { parsePrometheusText, type HistogramSeries, type MetricFamily } from "@/server/testing/prometheus-text";
import { createLogger, setLogger } from "./log";
import { initProcessMetrics, metricsRegistry } from "./metrics";
import { registerDbGauges } from "./db-gauges";
import { serveWorkerMetrics } from "./metrics-server";

const scrape = async () => parsePrometheusText(await metricsRegistry().metrics());
const family = (families: MetricFamily[], name: string) => families.find((f) => f.name === name);
/** The value of one counter/gauge series (0 when absent: prom-client omits unlabelled series never touched). */
function value(families: MetricFamily[], name: string, labels: Record<string, string> = {}): number {
  const f = family(families, name);
  if (!f || f.type === "histogram" || f.type === "summary") return 0;
  const m = f.series.find((s) => Object.entries(labels).every(([k, v]) => s.labels[k] === v));
  return m ? m.value : 0;
}
/** One histogram series, by its labels. */
function histogram(families: MetricFamily[], name: string, labels: Record<string, string> = {}): HistogramSeries | undefined {
  const f = family(families, name);
  if (f?.type !== "histogram") return undefined;
  return f.series.find((s) => Object.keys(s.labels).length === Object.keys(labels).length && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
}
const settle = () => new Promise((r) => setTimeout(r, 150));

type RunStatusName = "queued" | "running" | "cancelled" | "failed";
const statusEvent = (to: RunStatusName, from: RunStatusName | null = null) => ({ type: "status" as const, payload: { scope: "run" as const, from, to, reason: "test" } });

describe("Prometheus metrics", () => {
  it("counts run events when they commit, never on rollback, and never falls when runs are deleted", async () => {
    initProcessMetrics({ dbGauges: registerDbGauges });
    const db = getDb();
    const repo = await createRepository();
    const before = await scrape();
    const runs = await Promise.all([1, 2, 3].map(() => createRun({ repositoryId: repo.id, status: "queued" })));
    for (const run of runs) await appendRunEvents({ db, runId: run.id, events: [statusEvent("queued")] });
    await transaction(db, "cancel", async (tx) => {
      await appendRunEvents({ db: tx, runId: runs[0]!.id, events: [statusEvent("cancelled", "queued")] });
      await appendRunEvents({
        db: tx,
        runId: runs[1]!.id,
        events: [{ type: "write_back_completed", payload: { writeBackId: "wb1", action: "comment", outcome: "failed", error: "forge down" } }],
      });
    });
    // A rolled-back append is not counted.
    await expect(
      transaction(db, "rolled back", async (tx) => {
        await appendRunEvents({ db: tx, runId: runs[2]!.id, events: [statusEvent("failed", "queued")] });
        throw new Error("abort");
      }),
    ).rejects.toThrow("abort");
    await appendRunEvents({ db, runId: runs[2]!.id, events: [{ type: "queue", payload: { phase: "dequeued", attemptNumber: 1, waitMs: 1500 } }] });

    const after = await scrape();
    const delta = (name: string, labels?: Record<string, string>) => value(after, name, labels) - value(before, name, labels);
    expect(delta("airlock_dispatches_queued_total")).toBe(3);
    expect(delta("airlock_cancellations_total")).toBe(1);
    expect(delta("airlock_dispatches_failed_total")).toBe(0);
    expect(delta("airlock_write_backs_total", { kind: "comment", outcome: "failed" })).toBe(1);

    await db.agentDispatchRun.deleteMany({ where: { id: { in: runs.map((r) => r.id) } } });
    const afterDelete = await scrape();
    for (const name of ["airlock_dispatches_queued_total", "airlock_cancellations_total", "airlock_write_backs_total"]) {
      expect(value(afterDelete, name, name === "airlock_write_backs_total" ? { kind: "comment", outcome: "failed" } : {})).toBe(value(after, name, name === "airlock_write_backs_total" ? { kind: "comment", outcome: "failed" } : {}));
    }
  });

  it("a scrape parses, with histograms, the gauges read at scrape and the default process metrics", async () => {
    initProcessMetrics({ dbGauges: registerDbGauges });
    const db = getDb();
    const repo = await createRepository();
    const run = await createRun({ repositoryId: repo.id, status: "awaiting_approval" });
    await appendRunEvents({ db, runId: run.id, events: [{ type: "queue", payload: { phase: "dequeued", attemptNumber: 1, waitMs: 2500 } }] });
    const approval = await db.approvalRequest.create({
      data: { runId: run.id, action: "comment", presented: {}, status: "rejected", expiresAt: new Date(Date.now() + 3600_000), createdAt: new Date(Date.now() - 90_000), decidedAt: new Date() },
    });
    await recordAudit(db, { actor: { userId: null, label: "tester" }, action: "approval.reject", objectType: "ApprovalRequest", objectId: approval.id });
    await db.approvalRequest.create({ data: { runId: run.id, action: "comment", presented: {}, status: "pending", expiresAt: new Date(Date.now() + 3600_000) } });
    await settle();

    const families = await scrape();
    expect(family(families, "airlock_queue_wait_seconds")?.type).toBe("histogram");
    const qm = histogram(families, "airlock_queue_wait_seconds")!;
    expect(qm.count).toBeGreaterThanOrEqual(1);
    expect(qm.sum).toBeGreaterThanOrEqual(2.5);
    expect(qm.buckets["2.5"]).toBeGreaterThanOrEqual(1);
    // A labelled histogram: this series' _sum and _count are the one 90-second rejection.
    const rejectedWait = histogram(families, "airlock_approval_wait_seconds", { outcome: "rejected" })!;
    expect(rejectedWait.count).toBe(1);
    expect(rejectedWait.sum).toBeGreaterThanOrEqual(89);
    expect(rejectedWait.sum).toBeLessThan(120);
    expect(rejectedWait.buckets["+Inf"]).toBe(1);
    expect(histogram(families, "airlock_approval_wait_seconds", { outcome: "approved" })).toBeUndefined();
    expect(value(families, "airlock_approvals_total", { outcome: "rejected" })).toBeGreaterThanOrEqual(1);
    for (const h of ["airlock_attempt_duration_seconds", "airlock_webhook_handling_seconds", "airlock_sse_append_to_send_seconds"]) {
      expect(family(families, h)?.type, h).toBe("histogram");
    }
    expect(value(families, "airlock_approvals_pending")).toBeGreaterThanOrEqual(1);
    expect(family(families, "airlock_runs_queued")?.type).toBe("gauge");
    expect(family(families, "airlock_attempts_running")?.type).toBe("gauge");
    // Default process metrics.
    expect(family(families, "airlock_process_cpu_seconds_total")?.type).toBe("counter");
    expect(value(families, "airlock_process_resident_memory_bytes")).toBeGreaterThan(0);
    expect(family(families, "airlock_nodejs_eventloop_lag_seconds")?.type).toBe("gauge");
  });

  it("a worker's loopback endpoint refuses a scrape without the token in production and serves one with it", async () => {
    const token = "worker-metrics-token-0123456789";
    const { server, port } = await serveWorkerMetrics({ port: 0, token, nodeEnv: "production" });
    try {
      const url = `http://127.0.0.1:${port}/metrics`;
      const none = await fetch(url);
      expect(none.status).toBe(401);
      expect((await fetch(url, { headers: { authorization: "Bearer wrong-token-wrong-token-wrong" } })).status).toBe(401);
      const ok = await fetch(url, { headers: { authorization: `Bearer ${token}` } });
      expect(ok.status).toBe(200);
      const families = parsePrometheusText(await ok.text());
      expect(family(families, "airlock_dispatches_queued_total")?.type).toBe("counter");
      const off = await serveWorkerMetrics({ port: 0, token: undefined, nodeEnv: "production" });
      expect((await fetch(`http://127.0.0.1:${off.port}/metrics`)).status).toBe(403);
      off.server.close();
    } finally {
      server.close();
    }
  });
});

describe("structured logs", () => {
  it("one JSON line per seed-002 decision kind, carrying the run, attempt and delivery ids", async () => {
    const lines: Record<string, unknown>[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _enc, done) {
        for (const l of chunk.toString("utf8").split("\n").filter(Boolean)) lines.push(JSON.parse(l) as Record<string, unknown>);
        done();
      },
    });
    const prev = setLogger(createLogger(sink, "info"));
    try {
      const db = getDb();
      const repo = await createRepository();
      const run = await createRun({ repositoryId: repo.id, status: "running" });
      const attempt = await db.dispatchAttempt.create({ data: { runId: run.id, number: 1, status: "running", fencingToken: 1, startedAt: new Date() } });
      await appendRunEvents({
        db,
        runId: run.id,
        attemptId: attempt.id,
        events: [
          { type: "trigger_matched", payload: { ruleId: "r1", ruleName: "failed checks", triggerKind: "failed_check", dedupeKey: "k", deliveryId: "gh-delivery-1" } },
          { type: "context_assembled", payload: { digest: `sha256:${"a".repeat(64)}`, promptHash: "sha256:x", sizeBytes: 10, labels: [], redactions: 2, truncated: false } },
          {
            type: "admission",
            payload: {
              admitted: true,
              poolName: "untrusted-local",
              trustTier: "untrusted",
              runtimeServiceAccount: "agent-runtime",
              runnerServiceAccount: "runner",
              secretsGranted: ["npm-token"],
              secretsDenied: [{ name: "deploy-key", reason: "trusted pools only" }],
              configMapsGranted: [],
              summary: "fork PRs run untrusted",
            },
          },
          { type: "queue", payload: { phase: "dequeued", attemptNumber: 1, poolName: "untrusted-local", waitMs: 40 } },
          { type: "status", payload: { scope: "attempt", attemptNumber: 1, from: "starting", to: "running", reason: "session started" } },
        ],
      });
      const kinds = new Set(lines.map((l) => l.kind));
      for (const k of ["ci.correlation", "context.redaction", "runner.scheduling", "service_account.selection", "rbac.admission", "grant.decision", "adapter.gateway"]) {
        expect(kinds, k).toContain(k);
      }
      for (const l of lines) {
        expect(l.runId).toBe(run.id);
        expect(l.attemptId).toBe(attempt.id);
        expect(typeof l.time).toBe("string");
        expect(l.level).toBe("info");
      }
      expect(lines.find((l) => l.kind === "ci.correlation")?.deliveryId).toBe("gh-delivery-1");
      // Grants by name: the log says which, never a value.
      expect(lines.find((l) => l.kind === "grant.decision")).toMatchObject({ secretsGranted: ["npm-token"], secretsDenied: [{ name: "deploy-key" }] });
    } finally {
      setLogger(prev);
    }
  });
});
