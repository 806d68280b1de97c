// Shared by the server page (prefetch) and the client (paging): not a client module.

/** Events per window: ~100 KB of typical events, far under the 2 MB response cap. */
export const transcriptPageSize = 500;

/** The newest window a run page opens with: small, so the first paint is quick; older windows page in. */
export const initialEventsInput = (runId: string) => ({ runId, limit: 200 });
