// How every launcher starts the web server (npm start, npm run dev, the e2e servers, the
// benchmarks): Next.js behind server/web/serve.ts, which serves the SSE endpoints itself.
// One place, so what is tested and measured is what `npm start` runs.

/** Node arguments for the web server on host:port (`dev`: Next's dev mode). */
export function webServerArgs({ host = "127.0.0.1", port, dev = false }) {
  return ["--import", "tsx", "server/web/serve.ts", "-H", host, "-p", String(port), ...(dev ? ["--dev"] : [])];
}

/** The same, as a shell command line (for Playwright's webServer and `sh -c`). */
export function webServerCommand(opts) {
  return ["node", ...webServerArgs(opts)].join(" ");
}
