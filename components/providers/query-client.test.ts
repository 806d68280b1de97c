import { TRPCClientError } from "@trpc/client";
import { describe, expect, it } from "vitest";
import { shouldRetryQuery } from "./query-client";

function trpcError(httpStatus: number, code: string) {
  return TRPCClientError.from({ error: { message: code, code: -32000, data: { code, httpStatus } } });
}

describe("shouldRetryQuery", () => {
  it("shows a refusal at once: a 4xx is never retried", () => {
    expect(shouldRetryQuery(0, trpcError(403, "FORBIDDEN"))).toBe(false);
    expect(shouldRetryQuery(0, trpcError(404, "NOT_FOUND"))).toBe(false);
    expect(shouldRetryQuery(0, trpcError(401, "UNAUTHORIZED"))).toBe(false);
  });

  it("retries a server error or a lost connection, three times at most", () => {
    expect(shouldRetryQuery(0, trpcError(500, "INTERNAL_SERVER_ERROR"))).toBe(true);
    expect(shouldRetryQuery(0, new TypeError("Failed to fetch"))).toBe(true);
    expect(shouldRetryQuery(2, new TypeError("Failed to fetch"))).toBe(true);
    expect(shouldRetryQuery(3, new TypeError("Failed to fetch"))).toBe(false);
  });
});
