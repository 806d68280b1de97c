import { QueryClient, defaultShouldDehydrateQuery } from "@tanstack/react-query";
import { TRPCClientError } from "@trpc/client";
import superjson from "superjson";

/**
 * Retries what may pass on a second try (the network, a 5xx), never a refusal: a 4xx (no role,
 * not found, bad input) answers the same again, and three retries only hold its message back by
 * seven seconds of backoff.
 */
export function shouldRetryQuery(failureCount: number, error: unknown): boolean {
  if (failureCount >= 3) return false;
  if (error instanceof TRPCClientError) {
    const status = (error.data as { httpStatus?: unknown } | undefined)?.httpStatus;
    if (typeof status === "number" && status >= 400 && status < 500) return false;
  }
  return true;
}

export function makeQueryClient() {
  return new QueryClient({
    defaultOptions: {
      queries: { staleTime: 30_000, retry: shouldRetryQuery },
      dehydrate: {
        serializeData: superjson.serialize,
        // Stream pending server prefetches to the client too.
        shouldDehydrateQuery: (query) => defaultShouldDehydrateQuery(query) || query.state.status === "pending",
      },
      hydrate: { deserializeData: superjson.deserialize },
    },
  });
}
