import { join } from "node:path";
import pg from "pg";
import { migrationStatus } from "@/server/db/migrator.mjs";

export type Health = {
  status: "ok" | "degraded" | "down";
  database: { reachable: boolean; latencyMs?: number; error?: string };
  migrations?: { applied: number; pending: string[]; latest: string | null };
};

/** Liveness plus database reachability and migration state. */
export async function checkHealth(connectionString: string | undefined, timeoutMs = 2000): Promise<Health> {
  if (!connectionString) return { status: "down", database: { reachable: false, error: "DATABASE_URL is not set" } };
  const client = new pg.Client({ connectionString, connectionTimeoutMillis: timeoutMs, query_timeout: timeoutMs });
  const t0 = performance.now();
  try {
    await client.connect();
    await client.query("SELECT 1");
    const latencyMs = Math.round(performance.now() - t0);
    // The bundled server cannot locate files relative to itself; the app runs from the checkout.
    const m = await migrationStatus({ client, dir: join(process.cwd(), "prisma", "migrations") });
    return {
      status: m.pending.length ? "degraded" : "ok",
      database: { reachable: true, latencyMs },
      migrations: { applied: m.applied.length, pending: m.pending, latest: m.latest },
    };
  } catch (err) {
    // Say what kind of failure without leaking the URL or credentials.
    const code = (err as { code?: string }).code;
    return { status: "down", database: { reachable: false, error: code ? `connection failed (${code})` : "connection failed" } };
  } finally {
    await client.end().catch(() => {});
  }
}
