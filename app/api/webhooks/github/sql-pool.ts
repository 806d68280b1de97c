import pg from "pg";
import { DeliveryBatcher } from "@/server/domain/ingest/delivery/batcher";
import type { Sql } from "@/server/db/sql";
import { requireDatabaseUrl } from "@/server/env";

// The webhook route's own small pg pool (see server/db/sql.ts for why),
// one per process, surviving dev reloads like the Prisma client does.
const globalForPool = globalThis as unknown as { airlockWebhookPool?: pg.Pool; airlockWebhookBatcher?: DeliveryBatcher };

export function webhookSql(): Sql {
  if (!globalForPool.airlockWebhookPool) {
    const pool = new pg.Pool({ connectionString: requireDatabaseUrl(), max: 10, idleTimeoutMillis: 30_000 });
    // An idle connection that dies (database restart) is replaced on the next query.
    pool.on("error", () => undefined);
    globalForPool.airlockWebhookPool = pool;
  }
  const pool = globalForPool.airlockWebhookPool;
  return { query: async <R,>(text: string, values: readonly unknown[]) => ({ rows: (await pool.query(text, [...values])).rows as R[] }) };
}

/** The route's group-commit writer (see server/domain/ingest/delivery/batcher.ts). */
export function webhookRecorder(): DeliveryBatcher {
  globalForPool.airlockWebhookBatcher ??= new DeliveryBatcher(webhookSql());
  return globalForPool.airlockWebhookBatcher;
}
