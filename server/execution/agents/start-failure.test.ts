import { describe, expect, it } from "vitest";
import { AgentStartError, isTransientFailure } from "./types";

// Which start failures are worth an automatic retry: "not now" errors, not configuration ones.

const errno = (code: string) => Object.assign(new Error(code), { code });
const http = (code: number) => Object.assign(new Error(`HTTP ${code}`), { code });

describe("isTransientFailure", () => {
  it.each([
    ["EAGAIN (fork: resource temporarily unavailable)", errno("EAGAIN"), true],
    ["EMFILE (too many open files)", errno("EMFILE"), true],
    ["ENOMEM", errno("ENOMEM"), true],
    ["ECONNREFUSED from the cluster API", errno("ECONNREFUSED"), true],
    ["HTTP 503 from the cluster", http(503), true],
    ["HTTP 429 throttled", http(429), true],
    ["statusCode 502", Object.assign(new Error("bad gateway"), { statusCode: 502 }), true],
    ["a network error wrapped by fetch (cause.code)", new TypeError("fetch failed", { cause: errno("ECONNRESET") }), true],
    ["ENOENT (command not found)", errno("ENOENT"), false],
    ["EACCES (permission denied)", errno("EACCES"), false],
    ["HTTP 403 forbidden", http(403), false],
    ["HTTP 422 invalid Job", http(422), false],
    ["a plain error", new Error("invalid scenario"), false],
    ["nothing", undefined, false],
    ["a string", "EAGAIN", false],
  ])("%s -> %s", (_name, err, transient) => {
    expect(isTransientFailure(err)).toBe(transient);
  });

  it("is what an AgentStartError records unless told otherwise", () => {
    expect(new AgentStartError("could not start `x`: EAGAIN", { cause: errno("EAGAIN") }).transient).toBe(true);
    expect(new AgentStartError("could not start `x`: command not found", { cause: errno("ENOENT") }).transient).toBe(false);
    expect(new AgentStartError("bad stack").transient).toBe(false);
    expect(new AgentStartError("told", { transient: true }).transient).toBe(true);
    // A wrapped AgentStartError keeps its verdict.
    expect(new AgentStartError("outer", { cause: new AgentStartError("inner", { transient: true }) }).transient).toBe(true);
  });

  it("stops at a cause cycle", () => {
    const a = new Error("a") as Error & { cause?: unknown };
    a.cause = a;
    expect(isTransientFailure(a)).toBe(false);
  });
});
