import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { fileURLToPath } from "node:url";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { zStackSpec } from "@/server/domain/stacks/spec";
import { testSandbox } from "@/server/execution/sandbox/testing";
import type { SandboxNetwork } from "@/server/execution/sandbox/policy";
import { checkMcpServers } from "./mcp-health";

// The health checks against real MCP servers: the SDK's own server over stdio (started in the
// real bubblewrap sandbox) and over streamable HTTP on loopback, and servers that fail: one
// that exits, one that hangs past the timeout, one that answers garbage, one that floods its
// output. Each failing one quotes a token; none of it may reach a result.

const server = (name: string) => fileURLToPath(new URL(`./fixtures/mcp-health/${name}.mjs`, import.meta.url));
const token = `ghp_${"Q7".repeat(18)}`;

let http: Server;
let port = 0;
const httpRequests: { authorization?: string }[] = [];

beforeAll(async () => {
  http = createServer((req, res) => {
    httpRequests.push({ authorization: req.headers.authorization });
    const mcp = new McpServer({ name: "airlock-test-http", version: "1.0.0" });
    for (const name of ["one", "two", "three"]) mcp.registerTool(name, { description: name, inputSchema: { x: z.string().optional() } }, async () => ({ content: [{ type: "text", text: name }] }));
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    res.on("close", () => void transport.close());
    void mcp.connect(transport).then(() => transport.handleRequest(req, res));
  });
  await new Promise<void>((r) => http.listen(0, "127.0.0.1", () => r()));
  port = (http.address() as AddressInfo).port;
});
afterAll(() => void http.close());

function check(servers: { name: string; transport: "stdio" | "http"; target: string; secrets?: string[] }[], network: SandboxNetwork = { mode: "none", allowedHosts: [] }, timeoutMs = 3000) {
  const spec = zStackSpec.parse({ modelProvider: "anthropic", model: "claude-sonnet-4-5", adapter: { kind: "claude-code" }, promptTemplate: "x", mcpServers: servers });
  return checkMcpServers({
    spec,
    grants: { secrets: new Set(["test-mcp-token"]), configMaps: new Set() },
    granted: { TEST_MCP_TOKEN: token, NOT_GRANTED_TO_IT: "sk-ant-other-secret" },
    sandbox: testSandbox({ network }),
    workspaceDir: process.cwd(),
    timeoutMs,
  });
}

describe("MCP health checks", () => {
  it("a stdio server in the sandbox answers initialize and tools/list: ok, with its tool count and duration", async () => {
    const [r] = await check([{ name: "healthy", transport: "stdio", target: `node ${server("healthy")}`, secrets: ["test-mcp-token"] }]);
    expect(r).toMatchObject({ server: "healthy", transport: "stdio", ok: true, toolCount: 2 });
    expect(r!.reason).toBeUndefined();
    expect(r!.durationMs).toBeGreaterThan(0);
    expect(r!.durationMs).toBeLessThan(15_000); // a sandbox start on a busy 2-core machine
  });

  it("a server that exits, one that hangs past the timeout, one that answers garbage and one that floods: each failed with Airlock's reason, nothing of what they printed", async () => {
    const started = Date.now();
    const results = await check(
      ["exits", "hangs", "garbage", "huge"].map((n) => ({ name: n, transport: "stdio" as const, target: `node ${server(n)}`, secrets: ["test-mcp-token"] })),
      { mode: "none", allowedHosts: [] },
      2000,
    );
    const by = Object.fromEntries(results.map((r) => [r.server, r]));
    expect(by.exits).toMatchObject({ ok: false, reason: "the server exited with code 3 before it answered" });
    expect(by.hangs).toMatchObject({ ok: false, reason: "no answer to initialize within 2 s" });
    expect(by.hangs!.durationMs).toBeGreaterThanOrEqual(1900);
    expect(by.garbage).toMatchObject({ ok: false, reason: "the server wrote something that is not a JSON-RPC message on stdout" });
    expect(by.huge).toMatchObject({ ok: false, reason: "the server wrote more than 1024 KiB without a complete message" });
    // The probes run side by side, each bounded: the whole check takes about one timeout.
    expect(Date.now() - started).toBeLessThan(10_000);
    const text = JSON.stringify(results);
    expect(text).not.toContain(token);
    expect(text).not.toContain("Q7Q7");
    expect(text.length).toBeLessThan(2000);
  });

  it("an http server the egress rules allow answers over streamable HTTP with its bearer token", async () => {
    httpRequests.length = 0;
    const [r] = await check([{ name: "remote", transport: "http", target: `http://127.0.0.1:${port}/mcp`, secrets: ["test-mcp-token"] }], { mode: "restricted", allowedHosts: [`127.0.0.1:${port}`] });
    expect(r).toMatchObject({ server: "remote", transport: "http", ok: true, toolCount: 3 });
    expect(httpRequests.length).toBeGreaterThanOrEqual(2);
    expect(httpRequests.every((q) => q.authorization === `Bearer ${token}`)).toBe(true);
  });

  it("an http server the egress rules refuse is not contacted, and reported refused", async () => {
    httpRequests.length = 0;
    const results = await check([{ name: "unlisted", transport: "http", target: `http://127.0.0.1:${port}/mcp` }], { mode: "restricted", allowedHosts: ["mcp.example.com"] });
    expect(results[0]).toMatchObject({ ok: false, reason: `refused by the sandbox's egress rules: 127.0.0.1:${port} not in the allowlist; not contacted` });
    // Open network still never reaches this machine unless its address is listed.
    const [local] = await check([{ name: "local", transport: "http", target: `http://127.0.0.1:${port}/mcp` }], { mode: "open", allowedHosts: [] });
    expect(local).toMatchObject({ ok: false, reason: `refused by the sandbox's egress rules: 127.0.0.1:${port} resolves to this machine (IPv4 local address); not contacted` });
    const [none] = await check([{ name: "none", transport: "http", target: `http://127.0.0.1:${port}/mcp` }]);
    expect(none!.reason).toContain("the sandbox has no network");
    expect(httpRequests).toEqual([]);
  });
});
