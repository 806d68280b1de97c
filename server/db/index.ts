import { PrismaPg } from "@prisma/adapter-pg";
import { PrismaClient, type Prisma } from "./generated/client";
import { requireDatabaseUrl } from "../env";
import { AppError } from "../errors";

export { Prisma } from "./generated/client";
export type * from "./generated/client";

/** The client, or a transaction client: every domain function accepts either. */
export type Db = PrismaClient | Prisma.TransactionClient;
export type Tx = Prisma.TransactionClient;

export function createPrismaClient(connectionString: string): PrismaClient {
  return new PrismaClient({ adapter: new PrismaPg({ connectionString, max: 10 }) });
}

// One client per process; survive Next dev's module reloads.
const globalForPrisma = globalThis as unknown as { airlockPrisma?: PrismaClient };

export function getDb(): PrismaClient {
  globalForPrisma.airlockPrisma ??= createPrismaClient(requireDatabaseUrl());
  return globalForPrisma.airlockPrisma;
}

/**
 * Runs `fn` in a transaction named for logs and errors. A client that is
 * already a transaction runs `fn` inside it, so use cases compose.
 */
export async function transaction<T>(
  db: Db,
  name: string,
  fn: (tx: Tx) => Promise<T>,
  options?: { isolationLevel?: Prisma.TransactionIsolationLevel; maxWait?: number; timeout?: number },
): Promise<T> {
  if (!("$transaction" in db)) return fn(db);
  try {
    return await db.$transaction(fn, {
      isolationLevel: options?.isolationLevel,
      // How long to wait for a pooled connection (Prisma's default gives up after 2 s).
      maxWait: options?.maxWait,
      timeout: options?.timeout ?? 15_000,
    });
  } catch (err) {
    // Name the transaction in unexpected failures; domain errors keep the
    // message written for the person who will read it.
    if (err instanceof Error && !(err instanceof AppError)) err.message = `[tx ${name}] ${err.message}`;
    throw err;
  }
}
