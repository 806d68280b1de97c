import type { IncomingMessage } from "node:http";
import { env } from "@/server/env";

// The client's address for rate limits (sign-in, mutations). A header a client sends is never
// believed: the web server overwrites this one on every request with the socket's peer, or, with
// AIRLOCK_TRUST_PROXY behind a proxy that appends to X-Forwarded-For, the last address it added.
export const CLIENT_IP_HEADER = "x-airlock-client-ip";

export function clientAddress(req: IncomingMessage, trustProxy = env.AIRLOCK_TRUST_PROXY): string {
  if (trustProxy) {
    const forwarded = req.headers["x-forwarded-for"];
    const last = (Array.isArray(forwarded) ? forwarded.join(",") : (forwarded ?? "")).split(",").map((s) => s.trim()).filter(Boolean).at(-1);
    if (last) return last;
  }
  return req.socket.remoteAddress ?? "unknown";
}
