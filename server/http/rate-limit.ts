import { RateLimiterPrisma, RateLimiterRes } from "rate-limiter-flexible";
import type { PrismaClient } from "@/server/db";

// Limits on tRPC mutations, per account (or, signed out, per client address), counted in
// PostgreSQL by rate-limiter-flexible (table MutationRateLimit), so they hold across every web
// process. Sign-in is limited by better-auth's own database-backed limiter (server/auth).

export type LimitVerdict = { ok: true } | { ok: false; retryAfterSeconds: number };
export type Limiter = (key: string) => Promise<LimitVerdict>;

export function createMutationLimiter(db: PrismaClient, perMinute: number): Limiter {
  const limiter = new RateLimiterPrisma({ storeClient: db, tableName: "mutationRateLimit", keyPrefix: "mutation", points: perMinute, duration: 60 });
  return async (key) => {
    try {
      await limiter.consume(key);
      return { ok: true };
    } catch (res) {
      if (res instanceof RateLimiterRes) return { ok: false, retryAfterSeconds: Math.max(1, Math.ceil(res.msBeforeNext / 1000)) };
      throw res;
    }
  };
}
