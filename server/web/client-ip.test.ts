import type { IncomingMessage } from "node:http";
import { describe, expect, it } from "vitest";
import { clientAddress } from "./client-ip";

const req = (remoteAddress: string, headers: Record<string, string> = {}) => ({ socket: { remoteAddress }, headers }) as unknown as IncomingMessage;

describe("clientAddress", () => {
  it("is the socket's peer: a client's own X-Forwarded-For or X-Airlock-Client-IP changes nothing", () => {
    expect(clientAddress(req("203.0.113.9", { "x-forwarded-for": "1.2.3.4", "x-airlock-client-ip": "5.6.7.8" }), false)).toBe("203.0.113.9");
  });

  it("behind a trusted proxy, the last address the proxy appended", () => {
    expect(clientAddress(req("10.0.0.2", { "x-forwarded-for": "1.2.3.4, 198.51.100.20" }), true)).toBe("198.51.100.20");
    expect(clientAddress(req("10.0.0.2"), true)).toBe("10.0.0.2");
  });
});
