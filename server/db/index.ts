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

// Work to do once a transaction() commits (dropped if it rolls back), keyed by its client.
const commitHooks = new WeakMap<Tx, (() => void)[]>();

/**
 * Runs `fn` after the commit of the transaction `db` belongs to, or now when `db` is the
 * client itself (autocommit) or a transaction not opened through transaction(). For
 * observations (metrics, logs) of what a transaction wrote: a rolled-back change is not counted.
 */
export function afterCommit(db: Db, fn: () => void): void {
  const hooks = commitHooks.get(db as Tx);
  if (hooks) hooks.push(fn);
  else fn();
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
  const hooks: (() => void)[] = [];
  let result: T;
  try {
    const withHooks = (tx: Tx) => {
      commitHooks.set(tx, hooks);
      return fn(tx);
    };
    result = await db.$transaction(withHooks, {
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
  for (const hook of hooks) hook();
  return result;
}
