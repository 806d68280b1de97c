// Transaction-scoped advisory locks by name: held until the transaction ends, so two writers of
// the same thing (a pull request's record, a dedupe key, a branch's fix loop) take turns. Callers
// that take several take them in one global order so they cannot deadlock each other.
import type { Tx } from "./index";

export async function advisoryLock(tx: Tx, key: string): Promise<void> {
  // A hash collision only makes two unrelated writers wait for each other.
  await tx.$executeRaw`SELECT pg_advisory_xact_lock(hashtextextended(${key}, 0))`;
}
