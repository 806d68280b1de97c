import { Gauge, type Registry } from "prom-client";
import { getDb } from "@/server/db";

// Gauges read from the system of record at scrape: they are global facts (the same in every
// process), so only web processes register them; aggregate with `max`, not `sum`.

export function registerDbGauges(registry: Registry): void {
  const registers = [registry];
  new Gauge({
    name: "airlock_runs_queued",
    help: "Runs waiting for an attempt to start (read at scrape).",
    registers,
    async collect() {
      this.set(await getDb().agentDispatchRun.count({ where: { status: "queued" } }));
    },
  });
  new Gauge({
    name: "airlock_attempts_running",
    help: "Attempts starting or running, by runner pool (read at scrape).",
    labelNames: ["pool"] as const,
    registers,
    async collect() {
      const rows = await getDb().$queryRaw<{ pool: string | null; n: number }[]>`
        SELECT p."name" AS "pool", count(*)::int AS "n"
        FROM "DispatchAttempt" a LEFT JOIN "RunnerPool" p ON p."id" = a."runnerPoolId"
        WHERE a."status" IN ('starting', 'running') GROUP BY p."name"`;
      this.reset();
      for (const r of rows) this.set({ pool: r.pool ?? "none" }, r.n);
    },
  });
  new Gauge({
    name: "airlock_approvals_pending",
    help: "Approval requests waiting for a person (read at scrape).",
    registers,
    async collect() {
      this.set(await getDb().approvalRequest.count({ where: { status: "pending" } }));
    },
  });
}
