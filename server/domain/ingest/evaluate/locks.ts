// Transaction-scoped advisory locks. Evaluations of concurrent deliveries about the same pull
// request, pipeline or dedupe key take them in one global order (pull request, pipeline, then
// dedupe keys sorted), so check-then-write is race-free and they cannot deadlock each other.
import type { Tx } from "@/server/db";

export const prLockKey = (repositoryId: string, number: number) => `airlock:pr:${repositoryId}:${number}`;
export const pipelineLockKey = (repositoryId: string, externalId: string) => `airlock:pipeline:${repositoryId}:${externalId}`;
export const dedupeLockKey = (dedupeKey: string) => `airlock:dedupe:${dedupeKey}`;

export async function advisoryLock(tx: Tx, key: string): Promise<void> {
  // A hash collision only makes two unrelated evaluations wait for each other.
  await tx.$executeRaw`SELECT pg_advisory_xact_lock(hashtextextended(${key}, 0))`;
}
