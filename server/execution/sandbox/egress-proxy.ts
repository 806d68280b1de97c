import { lookup } from "node:dns/promises";
import { chmod, rm } from "node:fs/promises";
import { createServer, type IncomingMessage, request as httpRequest } from "node:http";
import { BlockList, connect, isIP, type Socket } from "node:net";
import { networkInterfaces } from "node:os";
import type { NetworkMode } from "./policy";

// The sandbox's only way out: an HTTP proxy (CONNECT for TLS and any TCP, absolute-URI
// requests for plain HTTP) listening on a Unix socket that is bound into the sandbox. It lets a
// connection through when its host is allowed (`restricted`: the pool's and stack's hosts;
// `open`: any host) and refuses and records everything else. Whatever the mode, a name that
// resolves to this machine (loopback, link-local, any address of its interfaces) is refused,
// unless that exact IP literal and port is listed: the database, the web server and the worker
// are never reachable by accident. The address that passed the check is the one dialled (no
// second lookup that DNS could answer differently).

export type BlockedConnection = { host: string; port: number; at: string; reason: string };

export type EgressProxyOptions = {
  socketPath: string;
  mode: Exclude<NetworkMode, "none">;
  allowedHosts: string[];
  onBlocked: (blocked: BlockedConnection) => void;
  now?: () => Date;
  connectTimeoutMs?: number;
};

export type EgressProxy = { close(): Promise<void> };

type Entry = { host: string; wildcard: boolean; port: number | null; literal: boolean };

function parseEntry(raw: string): Entry {
  const s = raw.trim().toLowerCase();
  const bracket = /^\[([^\]]+)\](?::(\d+))?$/.exec(s);
  if (bracket) return { host: bracket[1]!, wildcard: false, port: bracket[2] ? Number(bracket[2]) : null, literal: true };
  const m = /^(\*\.)?([^:]+)(?::(\d+))?$/.exec(s);
  if (!m) return { host: s, wildcard: false, port: null, literal: false };
  return { host: m[2]!, wildcard: Boolean(m[1]), port: m[3] ? Number(m[3]) : null, literal: isIP(m[2]!) !== 0 };
}

const hostMatches = (e: Entry, host: string) => (e.wildcard ? host.endsWith(`.${e.host}`) : host === e.host);

/** Addresses that belong to this machine or its link: never dialled unless listed literally. */
function localAddresses(): BlockList {
  const list = new BlockList();
  list.addSubnet("127.0.0.0", 8, "ipv4");
  list.addSubnet("0.0.0.0", 8, "ipv4");
  list.addSubnet("169.254.0.0", 16, "ipv4");
  list.addSubnet("224.0.0.0", 4, "ipv4");
  list.addAddress("255.255.255.255", "ipv4");
  list.addAddress("::1", "ipv6");
  list.addAddress("::", "ipv6");
  list.addSubnet("fe80::", 10, "ipv6");
  list.addSubnet("ff00::", 8, "ipv6");
  list.addSubnet("::ffff:127.0.0.0", 104, "ipv6");
  for (const addrs of Object.values(networkInterfaces())) {
    for (const a of addrs ?? []) list.addAddress(a.address.split("%")[0]!, a.family === "IPv6" ? "ipv6" : "ipv4");
  }
  return list;
}

export type EgressVerdict = { address: string } | { refused: string };

/**
 * The proxy's rule as a function: the address to dial for host:port, or why the sandbox refuses
 * it. Whatever else reaches out on an agent's behalf (the MCP health checks) asks this first.
 */
export function egressVerdict(policy: { mode: NetworkMode; allowedHosts: string[] }): (host: string, port: number) => Promise<EgressVerdict> {
  const entries = policy.allowedHosts.map(parseEntry);
  const local = localAddresses();
  return async function check(rawHost: string, port: number): Promise<EgressVerdict> {
    if (policy.mode === "none") return { refused: "the sandbox has no network" };
    const host = rawHost.replace(/^\[|\]$/g, "").toLowerCase();
    if (!host || !(port > 0 && port < 65536)) return { refused: "not a valid destination" };
    const literalListed = entries.some((e) => e.literal && e.host === host && e.port === port);
    const nameListed = entries.some((e) => !e.literal && hostMatches(e, host) && (e.port === null || e.port === port));
    const ipListed = entries.some((e) => e.literal && e.host === host && (e.port === null || e.port === port));
    if (policy.mode === "restricted" && !nameListed && !ipListed) return { refused: "not in the allowlist" };
    let address: string;
    try {
      address = isIP(host) ? host : (await lookup(host, { verbatim: true })).address;
    } catch {
      return { refused: "the name does not resolve" };
    }
    const family = isIP(address) === 6 ? "ipv6" : "ipv4";
    if (local.check(address, family) && !literalListed) return { refused: `resolves to this machine (${family === "ipv6" ? "IPv6" : "IPv4"} local address)` };
    return { address };
  };
}

export async function startEgressProxy(opts: EgressProxyOptions): Promise<EgressProxy> {
  const now = opts.now ?? (() => new Date());
  const timeoutMs = opts.connectTimeoutMs ?? 10_000;
  /** The address to dial, or the reason the connection is refused. */
  const check = egressVerdict({ mode: opts.mode, allowedHosts: opts.allowedHosts });

  const refuse = (host: string, port: number, reason: string) => opts.onBlocked({ host: host.slice(0, 300), port, at: now().toISOString(), reason });

  const sockets = new Set<Socket>();
  const server = createServer();
  server.on("connection", (s: Socket) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  });

  // CONNECT host:port: a tunnel (TLS, git over https, anything over TCP).
  server.on("connect", (req: IncomingMessage, client: Socket, head: Buffer) => {
    client.on("error", () => client.destroy());
    const m = /^(\[[^\]]+\]|[^:]+):(\d+)$/.exec(req.url ?? "");
    const host = m?.[1] ?? req.url ?? "";
    const port = Number(m?.[2] ?? 0);
    void check(host, port).then((verdict) => {
      if ("refused" in verdict) {
        refuse(host, port, verdict.refused);
        client.end(`HTTP/1.1 403 Forbidden\r\nX-Airlock-Sandbox: blocked\r\ncontent-type: text/plain\r\n\r\nblocked by the Airlock sandbox: ${host}:${port} ${verdict.refused}\n`);
        return;
      }
      const upstream = connect({ host: verdict.address, port, timeout: timeoutMs });
      upstream.once("connect", () => {
        upstream.setTimeout(0);
        client.write("HTTP/1.1 200 Connection Established\r\n\r\n");
        if (head.length > 0) upstream.write(head);
        upstream.pipe(client);
        client.pipe(upstream);
      });
      const fail = () => {
        if (!client.destroyed) client.end("HTTP/1.1 502 Bad Gateway\r\n\r\n");
        upstream.destroy();
      };
      upstream.once("timeout", fail);
      upstream.once("error", fail);
      client.once("close", () => upstream.destroy());
    });
  });

  // GET http://host/path: plain HTTP through the proxy.
  server.on("request", (req, res) => {
    let target: URL;
    try {
      target = new URL(req.url ?? "");
      if (target.protocol !== "http:") throw new Error("not http");
    } catch {
      res.writeHead(400, { "content-type": "text/plain" }).end("the Airlock sandbox proxy takes absolute http:// URLs and CONNECT\n");
      return;
    }
    const port = Number(target.port || 80);
    void check(target.hostname, port).then((verdict) => {
      if ("refused" in verdict) {
        refuse(target.hostname, port, verdict.refused);
        res.writeHead(403, { "content-type": "text/plain", "x-airlock-sandbox": "blocked" }).end(`blocked by the Airlock sandbox: ${target.hostname}:${port} ${verdict.refused}\n`);
        return;
      }
      const headers = { ...req.headers };
      delete headers["proxy-connection"];
      delete headers["proxy-authorization"];
      const upstream = httpRequest(
        { host: verdict.address, port, path: `${target.pathname}${target.search}`, method: req.method, headers, timeout: timeoutMs, setHost: false },
        (up) => {
          res.writeHead(up.statusCode ?? 502, up.headers);
          up.pipe(res);
        },
      );
      upstream.on("timeout", () => upstream.destroy(new Error("timeout")));
      upstream.on("error", () => {
        if (!res.headersSent) res.writeHead(502).end();
        else res.destroy();
      });
      req.pipe(upstream);
    });
  });

  await rm(opts.socketPath, { force: true });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(opts.socketPath, () => resolve());
  });
  // The sandbox's user is not this process's: it must be able to connect. The socket lives in
  // the session's private folder, so no other user of the machine can reach it.
  await chmod(opts.socketPath, 0o666);

  return {
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
