import type { NextConfig } from "next";
// Validate the environment at build and start: a bad setting fails here, by name.
import "./server/env";

const securityHeaders = [
  { key: "X-Content-Type-Options", value: "nosniff" },
  { key: "X-Frame-Options", value: "DENY" },
  { key: "Referrer-Policy", value: "same-origin" },
];

// public/ holds the icons and the web manifest (scripts/icons.mjs), top-level files. Their names
// carry no content hash, so not `immutable`: 30 days, after which a changed icon arrives.
const PUBLIC_FILES = "/:file([^/]+\\.(?:ico|png|svg|webmanifest))";
const publicFileHeaders = [{ key: "Cache-Control", value: "public, max-age=2592000" }];

const nextConfig: NextConfig = {
  poweredByHeader: false,
  // `npm test` type-checks the whole project as its own step (tsc --noEmit);
  // checking again inside every build only doubles the time of `npm start`.
  typescript: { ignoreBuildErrors: true },
  // Native-ish server packages stay out of the bundle.
  // Observability packages too: one copy per process, shared with the tsx-loaded server
  // (server/observability keeps its registry, logger and tracer on globalThis).
  serverExternalPackages: ["pg", "graphile-worker", "@kubernetes/client-node", "prom-client", "pino", "@opentelemetry/sdk-node", "@prisma/instrumentation"],
  async headers() {
    return [
      { source: "/:path*", headers: securityHeaders },
      { source: PUBLIC_FILES, headers: publicFileHeaders },
    ];
  },
};

export default nextConfig;
