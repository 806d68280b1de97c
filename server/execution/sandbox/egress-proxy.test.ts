import { mkdtempSync, rmSync } from "node:fs";
import { connect, createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type BlockedConnection, startEgressProxy } from "./egress-proxy";

// The egress proxy on its Unix socket, as the forwarder inside a sandbox reaches it: CONNECT
// tunnels to allowed destinations; everything else refused with 403 and recorded.

let echo: Server;
let echoPort = 0;
const dir = mkdtempSync(join(tmpdir(), "airlock-egress-test-"));

beforeAll(async () => {
  echo = createServer((s) => s.pipe(s));
  await new Promise<void>((r) => echo.listen(0, "127.0.0.1", () => r()));
  echoPort = (echo.address() as { port: number }).port;
});
afterAll(() => {
  echo.close();
  rmSync(dir, { recursive: true, force: true });
});

/** CONNECT through the proxy; the status line, and the echo of "ping" when the tunnel opened. */
function tunnel(socketPath: string, target: string): Promise<string> {
  return new Promise((resolve) => {
    const s = connect(socketPath);
    let text = "";
    s.on("data", (d) => {
      text += d.toString();
      if (text.startsWith("HTTP/1.1 200") && text.includes("\r\n\r\n") && !text.includes("ping")) s.write("ping");
      if (text.includes("ping") || text.startsWith("HTTP/1.1 403")) s.end();
    });
    s.on("close", () => resolve(text.startsWith("HTTP/1.1 200") ? `200 ${text.split("\r\n\r\n")[1]}` : text.split("\r\n")[0]!));
    s.write(`CONNECT ${target} HTTP/1.1\r\nHost: ${target}\r\n\r\n`);
  });
}

async function withProxy(mode: "restricted" | "open", allowedHosts: string[], fn: (socket: string, blocked: BlockedConnection[]) => Promise<void>) {
  const socketPath = join(dir, `${mode}-${Math.random().toString(36).slice(2)}.sock`);
  const blocked: BlockedConnection[] = [];
  const proxy = await startEgressProxy({ socketPath, mode, allowedHosts, onBlocked: (b) => blocked.push(b) });
  try {
    await fn(socketPath, blocked);
  } finally {
    await proxy.close();
  }
}

describe("the egress proxy", () => {
  it("tunnels to a listed ip:port and refuses, and records, an unlisted one", async () => {
    await withProxy("restricted", [`127.0.0.1:${echoPort}`], async (socket, blocked) => {
      expect(await tunnel(socket, `127.0.0.1:${echoPort}`)).toBe("200 ping");
      expect(await tunnel(socket, `127.0.0.1:${echoPort + 1}`)).toBe("HTTP/1.1 403 Forbidden");
      expect(blocked).toEqual([{ host: "127.0.0.1", port: echoPort + 1, at: expect.any(String), reason: "not in the allowlist" }]);
    });
  });

  it("never dials this machine through a name, even a listed one, nor in open mode unless the literal is listed", async () => {
    await withProxy("restricted", ["localhost"], async (socket, blocked) => {
      expect(await tunnel(socket, `localhost:${echoPort}`)).toBe("HTTP/1.1 403 Forbidden");
      expect(blocked[0]?.reason).toMatch(/^resolves to this machine/);
    });
    await withProxy("open", [], async (socket, blocked) => {
      expect(await tunnel(socket, `127.0.0.1:${echoPort}`)).toBe("HTTP/1.1 403 Forbidden");
      expect(await tunnel(socket, `[::1]:${echoPort}`)).toBe("HTTP/1.1 403 Forbidden");
      expect(blocked.map((b) => b.reason)).toEqual([expect.stringMatching(/^resolves to this machine/), expect.stringMatching(/^resolves to this machine/)]);
    });
  });

  it("matches *.domain against subdomains only, and a port-less entry on any port", async () => {
    await withProxy("restricted", ["*.example.invalid", "api.example.invalid"], async (socket, blocked) => {
      // Allowed names get as far as the lookup (.invalid never resolves); the others are refused by name.
      await tunnel(socket, "a.example.invalid:443");
      await tunnel(socket, "api.example.invalid:8443");
      await tunnel(socket, "example.invalid:443");
      await tunnel(socket, "evil-example.invalid:443");
      expect(blocked.map((b) => `${b.host} ${b.reason}`)).toEqual([
        "a.example.invalid the name does not resolve",
        "api.example.invalid the name does not resolve",
        "example.invalid not in the allowlist",
        "evil-example.invalid not in the allowlist",
      ]);
    });
  });

  it("answers anything but CONNECT or an absolute http:// URL with 400", async () => {
    await withProxy("open", [], async (socket) => {
      const status = await new Promise<string>((resolve) => {
        const s = connect(socket);
        s.on("data", (d) => (resolve(d.toString().split("\r\n")[0]!), s.end()));
        s.write("GET /etc/passwd HTTP/1.1\r\nHost: x\r\n\r\n");
      });
      expect(status).toBe("HTTP/1.1 400 Bad Request");
    });
  });
});
