// The advisory-lock names evaluation takes. Evaluations of concurrent deliveries about the same
// pull request, pipeline or dedupe key take them in one global order (pull request, pipeline,
// then dedupe keys sorted), so check-then-write is race-free and they cannot deadlock each other.

export const prLockKey = (repositoryId: string, number: number) => `airlock:pr:${repositoryId}:${number}`;
export const pipelineLockKey = (repositoryId: string, externalId: string) => `airlock:pipeline:${repositoryId}:${externalId}`;
export const dedupeLockKey = (dedupeKey: string) => `airlock:dedupe:${dedupeKey}`;
