// The one query interface the delivery hot path needs. The webhook route passes a plain pg pool:
// recording a delivery is one statement, and through Prisma it cost ~4x the client CPU of pg on
// the reference box (bench/webhooks.ts). Everything else (local ingest, tests, transactions)
// passes the Prisma client through `prismaSql`.
import type { Db } from "./index";

export type Sql = {
  query<R>(text: string, values: readonly unknown[]): Promise<{ rows: R[] }>;
};

export function prismaSql(db: Db): Sql {
  return {
    async query<R>(text: string, values: readonly unknown[]) {
      return { rows: await db.$queryRawUnsafe<R[]>(text, ...values) };
    },
  };
}
