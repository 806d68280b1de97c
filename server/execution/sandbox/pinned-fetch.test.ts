import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { pinnedFetch } from "./pinned-fetch";

// A real HTTP server on loopback stands for the MCP server; the names in the URLs below do not
// resolve at all, so a request that arrives proves the checked address was dialled, not a name
// looked up again.

let server: Server;
let seen: { method: string; url: string; headers: IncomingHttpHeaders; body: string }[];
const port = () => (server.address() as AddressInfo).port;

beforeEach(async () => {
  seen = [];
  server = createServer((req, res) => {
    let body = "";
    req.on("data", (c: Buffer) => (body += c.toString()));
    req.on("end", () => {
      seen.push({ method: req.method!, url: req.url!, headers: req.headers, body });
      if (req.url === "/redirect") return void res.writeHead(302, { location: "http://127.0.0.1:5432/" }).end();
      if (req.url === "/events") {
        res.writeHead(200, { "content-type": "text/event-stream" });
        res.write("data: one\n\n");
        return void setTimeout(() => res.end("data: two\n\n"), 20);
      }
      res.writeHead(200, { "content-type": "application/json", "mcp-session-id": "s1" }).end(JSON.stringify({ echo: body }));
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
});
afterEach(() => new Promise<void>((r) => server.close(() => r())));

describe("pinnedFetch", () => {
  it("dials the address the check returned, never a second lookup, with the URL's name as Host", async () => {
    const checked: string[] = [];
    const f = pinnedFetch(async (u) => {
      checked.push(u.host);
      return "127.0.0.1";
    });
    const res = await f(`http://mcp.rebind.invalid:${port()}/mcp?x=1`, { method: "POST", headers: { "content-type": "application/json", authorization: "Bearer t" }, body: '{"jsonrpc":"2.0"}' });
    expect(res.status).toBe(200);
    expect(res.headers.get("mcp-session-id")).toBe("s1");
    expect(await res.json()).toEqual({ echo: '{"jsonrpc":"2.0"}' });
    expect(checked).toEqual([`mcp.rebind.invalid:${port()}`]);
    expect(seen[0]).toMatchObject({ method: "POST", url: "/mcp?x=1", body: '{"jsonrpc":"2.0"}' });
    expect(seen[0]!.headers.host).toBe(`mcp.rebind.invalid:${port()}`);
    expect(seen[0]!.headers.authorization).toBe("Bearer t");
  });

  it("streams a server-sent event body as it comes", async () => {
    const f = pinnedFetch(async () => "127.0.0.1");
    const res = await f(new Request(`http://events.invalid:${port()}/events`, { headers: { accept: "text/event-stream" } }));
    expect(await res.text()).toBe("data: one\n\ndata: two\n\n");
    expect(seen[0]!.headers.accept).toBe("text/event-stream");
  });

  it("hostile: a refused destination is never contacted, and a redirect is never followed", async () => {
    const refusing = pinnedFetch(async () => {
      throw new Error("resolves to this machine");
    });
    await expect(refusing(`http://evil.invalid:${port()}/mcp`)).rejects.toThrow("resolves to this machine");
    expect(seen).toHaveLength(0);
    const f = pinnedFetch(async () => "127.0.0.1");
    await expect(f(`http://mcp.invalid:${port()}/redirect`)).rejects.toThrow(/redirect .* is not followed/);
    expect(seen.map((s) => s.url)).toEqual(["/redirect"]);
    await expect(f("file:///etc/passwd")).rejects.toThrow(/not http or https/);
  });
});
