import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Readable, Writable } from "node:stream";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { SSEClientTransport } from "@modelcontextprotocol/sdk/client/sse.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ReadBuffer, serializeMessage } from "@modelcontextprotocol/sdk/shared/stdio.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import type { StackSpec } from "@/server/domain/stacks/spec";
import { egressVerdict } from "@/server/execution/sandbox/egress-proxy";
import { pinnedFetch } from "@/server/execution/sandbox/pinned-fetch";
import { launchAgentProcess, type SandboxedProcess } from "@/server/execution/sandbox/launch";
import { defaultAgentPath } from "../command-adapter";
import type { AgentSandbox } from "../types";
import { type Grants, type McpConfigEntry, mcpServerEntries } from "./launch-plan";

// MCP health checks before a Claude Code attempt launches. Each of the stack's servers is
// probed as the agent would meet it, from the same generated --mcp-config entry:
// - stdio: the command starts inside the attempt's sandbox (its network, limits and hidden
//   paths; the workspace read-only; a scratch HOME) with only the variables its entry names,
//   and must answer `initialize` and `tools/list`;
// - http/sse: the sandbox's egress rule (egressVerdict, the proxy's own) decides first; a host the
//   agent could not reach is reported refused and never contacted. Otherwise MCP's initialize
//   and tools/list over streamable HTTP (or SSE), every request checked again and dialled at the
//   address that was checked (sandbox/pinned-fetch.ts), no redirects.
// Each probe is bounded by a timeout. What a server says is never passed on (its stderr, its
// stdout, its error texts can quote a secret): a result carries its tool count, or a reason
// Airlock wrote.

export type McpHealth = {
  server: string;
  transport: "stdio" | "http" | "sse";
  ok: boolean;
  toolCount?: number;
  reason?: string;
  durationMs: number;
};

export type McpProbeOptions = {
  spec: StackSpec;
  grants: Grants;
  /** The attempt's granted values by variable name (what grantedEnvironment returns). */
  granted: Record<string, string>;
  /** The agent's sandbox: the probe gets no more than this. */
  sandbox: AgentSandbox;
  workspaceDir: string;
  timeoutMs: number;
  now?: () => number;
};

/** Largest message a server may send before the probe gives up on it. */
const maxMessageBytes = 1024 * 1024;
const clientInfo = { name: "airlock-mcp-health", version: "1.0.0" };

class ProbeFailure extends Error {}

/** `${NAME}` references of an entry, filled from the granted values (unset ones stay empty). */
const fill = (text: string, granted: Record<string, string>) => text.replace(/\$\{([A-Za-z0-9_]+)\}/g, (_, name: string) => granted[name] ?? "");

export async function checkMcpServers(opts: McpProbeOptions): Promise<McpHealth[]> {
  const now = opts.now ?? Date.now;
  const { servers } = mcpServerEntries(opts.spec, opts.grants);
  return Promise.all(
    opts.spec.mcpServers.map(async (server): Promise<McpHealth> => {
      const entry = servers[server.name]!;
      const started = now();
      const base = { server: server.name, transport: server.transport };
      try {
        const toolCount = await probe(entry, opts);
        return { ...base, ok: true, toolCount, durationMs: Math.max(0, now() - started) };
      } catch (err) {
        const reason = err instanceof ProbeFailure ? err.message : "the check failed unexpectedly";
        return { ...base, ok: false, reason, durationMs: Math.max(0, now() - started) };
      }
    }),
  );
}

async function probe(entry: McpConfigEntry, opts: McpProbeOptions): Promise<number> {
  if (entry.type === "stdio") return probeStdio(entry, opts);
  return probeRemote(entry, opts);
}

/** initialize, then tools/list, within the deadline; which step was pending says what timed out. */
async function initializeAndList(transport: Transport, timeoutMs: number, failure: () => string | null): Promise<number> {
  const client = new Client(clientInfo);
  let step = "initialize";
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new ProbeFailure(`no answer to ${step} within ${formatSeconds(timeoutMs)}`)), timeoutMs);
  });
  try {
    const work = (async () => {
      await client.connect(transport, { timeout: timeoutMs });
      step = "tools/list";
      const tools = await client.listTools(undefined, { timeout: timeoutMs });
      return tools.tools.length;
    })();
    return await Promise.race([work, deadline]).catch((err: unknown) => {
      if (err instanceof ProbeFailure) throw err;
      // The SDK's own error can quote what the server sent; say what failed in our words.
      throw new ProbeFailure(failure() ?? `${step} failed: ${describeSdkError(err)}`);
    });
  } finally {
    clearTimeout(timer);
    await client.close().catch(() => undefined);
  }
}

/** An SDK error as a short phrase of ours: the server's own text is never repeated. */
function describeSdkError(err: unknown): string {
  const code = (err as { code?: unknown })?.code;
  if (typeof code === "number") return `the server answered with error ${code}`;
  const message = err instanceof Error ? err.message : "";
  if (/connection closed/i.test(message)) return "the connection closed";
  if (/timed? ?out/i.test(message)) return "it timed out";
  if (/HTTP (\d{3})/.test(message)) return `HTTP ${/HTTP (\d{3})/.exec(message)![1]}`;
  return "the answer was not valid MCP";
}

const formatSeconds = (ms: number) => `${Math.round(ms / 100) / 10} s`;

// ---- stdio, inside the agent's sandbox

async function probeStdio(entry: Extract<McpConfigEntry, { type: "stdio" }>, opts: McpProbeOptions): Promise<number> {
  const dir = await mkdtemp(join(tmpdir(), "airlock-mcp-health-"));
  const home = join(dir, "home");
  await mkdir(home, { recursive: true });
  const sandbox = opts.sandbox;
  let proc: SandboxedProcess | undefined;
  try {
    const env: Record<string, string> = { PATH: defaultAgentPath, HOME: home, LANG: "C.UTF-8" };
    for (const [name, value] of Object.entries(entry.env)) env[name] = fill(value, opts.granted);
    try {
      proc = await launchAgentProcess({
        ...(sandbox.kind === "none" ? { kind: "none" as const, reason: sandbox.reason } : { kind: "bubblewrap" as const }),
        argv: [entry.command, ...entry.args],
        env,
        cwd: opts.workspaceDir,
        writablePaths: [home],
        readOnlyPaths: [opts.workspaceDir, ...(sandbox.kind === "bubblewrap" ? sandbox.readOnlyPaths : [])],
        hiddenPaths: sandbox.kind === "bubblewrap" ? sandbox.hiddenPaths : [],
        network: sandbox.kind === "bubblewrap" ? sandbox.network : { mode: "open", allowedHosts: [] },
        limits: sandbox.kind === "bubblewrap" ? sandbox.limits : { memoryMb: 0, processes: 0, cpuSeconds: 0, diskMb: 0 },
        sessionDir: dir,
        stateDir: sandbox.kind === "bubblewrap" ? sandbox.stateDir : dir,
      });
    } catch (err) {
      const e = err as NodeJS.ErrnoException;
      throw new ProbeFailure(`could not start \`${entry.command}\`: ${e.code === "ENOENT" ? "command not found" : e.code === "EACCES" ? "permission denied" : "the sandbox refused it"}`);
    }
    const transport = new ProcessTransport(proc.stdout, proc.stdin);
    proc.stderr.resume(); // drained, never read
    let exit: string | null = null;
    void proc.exited.then(({ code, signal }) => {
      exit = signal ? `was killed by ${signal}` : `exited with code ${code ?? "?"}`;
      transport.onclose?.();
    });
    return await initializeAndList(transport, opts.timeoutMs, () =>
      transport.failure ?? (exit ? `the server ${exit} before it answered` : null),
    );
  } finally {
    if (proc) {
      proc.signal("SIGKILL");
      await proc.finish().catch(() => undefined);
    }
    await rm(dir, { recursive: true, force: true }).catch(() => undefined);
  }
}

/** MCP's stdio framing over a sandboxed process's pipes, bounded per message. */
class ProcessTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  /** Why the server's output was refused, in Airlock's words. */
  failure: string | null = null;
  private readonly buffer = new ReadBuffer({ maxBufferSize: maxMessageBytes });

  constructor(
    private readonly stdout: Readable,
    private readonly stdin: Writable,
  ) {}

  start(): Promise<void> {
    this.stdout.on("data", (chunk: Buffer) => {
      if (this.failure) return;
      try {
        this.buffer.append(chunk);
        for (let m = this.buffer.readMessage(); m; m = this.buffer.readMessage()) this.onmessage?.(m);
      } catch (err) {
        this.failure = /exceeded maximum size/.test((err as Error).message)
          ? `the server wrote more than ${maxMessageBytes / 1024} KiB without a complete message`
          : "the server wrote something that is not a JSON-RPC message on stdout";
        this.buffer.clear();
        this.onerror?.(new Error(this.failure));
        this.onclose?.();
      }
    });
    this.stdin.on("error", () => undefined);
    return Promise.resolve();
  }

  send(message: JSONRPCMessage): Promise<void> {
    return new Promise((resolve) => {
      if (this.stdin.destroyed) return resolve();
      this.stdin.write(serializeMessage(message), () => resolve());
    });
  }

  close(): Promise<void> {
    this.stdin.end();
    return Promise.resolve();
  }
}

// ---- http and sse, through the egress rule

async function probeRemote(entry: Extract<McpConfigEntry, { type: "http" | "sse" }>, opts: McpProbeOptions): Promise<number> {
  let url: URL;
  try {
    url = new URL(entry.url);
  } catch {
    throw new ProbeFailure("its URL is not a URL");
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") throw new ProbeFailure(`its URL's scheme ${url.protocol} is not http or https`);
  // An unsandboxed attempt (an admin's choice for a trusted pool) has the worker's own network.
  const network = opts.sandbox.kind === "bubblewrap" ? opts.sandbox.network : { mode: "open" as const, allowedHosts: [] };
  const verdict = egressVerdict(network);
  const portOf = (u: URL) => Number(u.port || (u.protocol === "https:" ? 443 : 80));
  let refused: string | null = null;
  /** The address to dial (checked once, dialled as checked: no second lookup for DNS to answer differently). */
  const check = async (u: URL): Promise<string> => {
    const v = opts.sandbox.kind === "none" ? { address: u.hostname } : await verdict(u.hostname, portOf(u));
    if ("refused" in v) {
      refused = `refused by the sandbox's egress rules: ${u.hostname.slice(0, 253)}:${portOf(u)} ${v.refused}; not contacted`;
      throw new ProbeFailure(refused);
    }
    return v.address;
  };
  await check(url);
  const guardedFetch = opts.sandbox.kind === "none" ? (input: string | URL | Request, init?: RequestInit) => fetch(input, { ...init, redirect: "error" }) : pinnedFetch(check);
  const headers = Object.fromEntries(Object.entries(entry.headers).map(([k, v]) => [k, fill(v, opts.granted)]));
  const transport =
    entry.type === "http"
      ? new StreamableHTTPClientTransport(url, { requestInit: { headers, redirect: "error" }, fetch: guardedFetch })
      : new SSEClientTransport(url, { requestInit: { headers, redirect: "error" }, eventSourceInit: { fetch: (u, i) => guardedFetch(u, { ...i, headers: { ...headers, ...(i?.headers as Record<string, string>) } }) }, fetch: guardedFetch });
  return initializeAndList(transport, opts.timeoutMs, () => refused);
}
