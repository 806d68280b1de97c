import http from "node:http";
import { percentile } from "./data";

// (b) Many concurrent SSE clients on one server process while events are
// appended: how many connect, append-to-receive latency over every stream,
// and the server's resident memory. Frames are scanned for their `id:` only,
// so the client spends as little CPU as it can (it shares the 2 cores).

export type LoadResult = {
  streams: number;
  connected: number;
  refused: number;
  connectSeconds: number;
  appended: number;
  received: number;
  p50: number;
  p99: number;
  maxRssMb: number;
};

export async function sseLoad(opts: {
  url: string;
  headers: Record<string, string>;
  streams: number;
  pids: () => number[];
  rss: (pids: number[]) => number;
  append: (onCommit: (seq: number, committedAt: number) => void) => Promise<{ appended: number }>;
}): Promise<LoadResult> {
  const agent = new http.Agent({ keepAlive: false, maxSockets: Number.POSITIVE_INFINITY });
  const committed = new Map<number, number>();
  const latencies: number[] = [];
  const requests: http.ClientRequest[] = [];
  let connected = 0;
  let refused = 0;
  const t0 = Date.now();
  let allConnected: () => void = () => {};
  const done = new Promise<void>((resolve) => (allConnected = resolve));
  const settle = () => {
    if (connected + refused === opts.streams) allConnected();
  };

  for (let i = 0; i < opts.streams; i++) {
    const req = http.get(opts.url, { agent, headers: opts.headers }, (res) => {
      if (res.statusCode !== 200) {
        refused++;
        settle();
        res.resume();
        return;
      }
      let carry = "";
      let counted = false;
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => {
        const now = Date.now();
        if (!counted) {
          counted = true;
          connected++;
          settle();
        }
        const text = carry + chunk;
        const cut = text.lastIndexOf("\n");
        carry = cut === -1 ? text : text.slice(cut + 1);
        const lines = cut === -1 ? "" : text.slice(0, cut);
        for (let at = lines.indexOf("id: "); at !== -1; at = lines.indexOf("id: ", at + 4)) {
          if (at !== 0 && lines[at - 1] !== "\n") continue;
          const seq = Number.parseInt(lines.slice(at + 4, at + 16), 10);
          const sent = committed.get(seq);
          if (sent !== undefined) latencies.push(Math.max(0, now - sent));
        }
      });
      res.on("error", () => {});
    });
    req.on("error", () => {
      refused++;
      settle();
    });
    requests.push(req);
    // Open in small bursts so the accept queue never overflows.
    if (i % 50 === 49) await new Promise((r) => setTimeout(r, 20));
  }
  await Promise.race([done, new Promise((r) => setTimeout(r, 60_000))]);
  const connectSeconds = (Date.now() - t0) / 1000;

  let maxRss = 0;
  const sampler = setInterval(() => (maxRss = Math.max(maxRss, opts.rss(opts.pids()))), 250);
  const { appended } = await opts.append((seq, at) => committed.set(seq, at));
  // Late events count (with their latency) for up to 10 s; anything later is reported as not received.
  const expected = appended * connected;
  for (let waited = 0; waited < 10_000 && latencies.length < expected; waited += 100) await new Promise((r) => setTimeout(r, 100));
  maxRss = Math.max(maxRss, opts.rss(opts.pids()));
  clearInterval(sampler);
  for (const req of requests) req.destroy();
  agent.destroy();

  return {
    streams: opts.streams,
    connected,
    refused,
    connectSeconds,
    appended,
    received: latencies.length,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    maxRssMb: maxRss / 1024 / 1024,
  };
}
