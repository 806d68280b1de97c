import { z } from "zod";
import { DEFAULT_GITHUB_LOG_HOSTS, parseLogHosts } from "./forges/github/log-hosts";

// The only reader of process.env. Everything else imports `env` (or takes its
// settings as arguments), so a bad setting fails once, at start, with its name.
const zBool = z
  .enum(["1", "0", "true", "false", ""])
  .optional()
  .transform((v) => v === "1" || v === "true");

const zEnv = z.object({
  NODE_ENV: z.enum(["development", "test", "production"]).default("development"),
  DATABASE_URL: z.string().url().optional(),
  PORT: z.coerce.number().int().min(1).max(65535).default(3000),
  // Public origin of the console; used for auth callbacks and same-origin checks.
  AIRLOCK_URL: z.string().url().optional(),
  // Where embedded PostgreSQL, bare repositories and workspaces live.
  AIRLOCK_DATA_DIR: z.string().default(".airlock"),
  BETTER_AUTH_SECRET: z.string().min(16).optional(),
  GITHUB_CLIENT_ID: z.string().optional(),
  GITHUB_CLIENT_SECRET: z.string().optional(),
  // GitHub's web root, where "Sign in with GitHub" authorises (GitHub Enterprise Server: https://HOST).
  GITHUB_URL: z.string().url().default("https://github.com"),
  // GitHub sign-in admits invited people, and members of this organisation (and team, a slug of it).
  AIRLOCK_GITHUB_ORG: z.string().regex(/^[A-Za-z0-9-]{1,39}$/, "a GitHub organisation login").optional(),
  AIRLOCK_GITHUB_TEAM: z.string().regex(/^[A-Za-z0-9_.-]{1,100}$/, "a team slug").optional(),
  // Anyone may create an account with an email and password (off: accounts come by invitation).
  AIRLOCK_EMAIL_SIGN_UP: zBool,
  // Rate limits on sign-in and mutations, kept in PostgreSQL (so they hold across processes).
  // Default: on in production, off in development and tests.
  AIRLOCK_RATE_LIMIT: z.enum(["on", "off"]).optional(),
  // Behind a reverse proxy that appends the client's address to X-Forwarded-For: trust its last entry.
  AIRLOCK_TRUST_PROXY: zBool,
  /** tRPC mutations one account (or, signed out, one address) may make per minute. */
  AIRLOCK_MUTATION_RATE_LIMIT: z.coerce.number().int().min(1).max(100_000).default(300),
  GITHUB_WEBHOOK_SECRET: z.string().optional(),
  // Seals secrets at rest (the GitHub App's key and secrets): 32 bytes, base64. Unset: the data
  // folder's secret.key (created on first use, mode 0600).
  AIRLOCK_SECRET_KEY: z.string().regex(/^[A-Za-z0-9+/]{43}=$/, "32 bytes in base64 (openssl rand -base64 32)").optional(),
  GITHUB_TOKEN: z.string().optional(),
  // GitHub's REST API root; set for GitHub Enterprise Server (https://HOST/api/v3).
  GITHUB_API_URL: z.string().url().optional(),
  // Hosts GitHub's job-logs redirect may send the download to (comma-separated, * for part of a
  // label, http:// only where written); a redirect anywhere else is refused. See README "GitHub".
  GITHUB_LOG_HOSTS: z
    .string()
    .max(4_000)
    .default(DEFAULT_GITHUB_LOG_HOSTS)
    .transform((text, ctx) => {
      const parsed = parseLogHosts(text);
      if (parsed.ok) return parsed.hosts;
      ctx.addIssue({ code: "custom", message: parsed.error });
      return z.NEVER;
    }),
  WEBHOOK_MAX_BYTES: z.coerce.number().int().positive().default(5 * 1024 * 1024),
  AIRLOCK_BOT_HANDLE: z.string().default("@agent"),
  AIRLOCK_DEMO_PASSWORD: z.string().min(8).optional(),
  AIRLOCK_LOG_LEVEL: z.enum(["debug", "info", "warn", "error"]).default("info"),
  AIRLOCK_SECURE_COOKIES: zBool,
  // When set, GET /api/metrics requires `Authorization: Bearer <token>`.
  AIRLOCK_METRICS_TOKEN: z.string().min(16).optional(),
  /** A worker serves its Prometheus registry on 127.0.0.1:<port> (0: any free port, logged). Unset: off. */
  AIRLOCK_WORKER_METRICS_PORT: z.coerce.number().int().min(0).max(65535).optional(),
  /** OTLP/HTTP collector root (e.g. http://127.0.0.1:4318): traces are exported there. Unset: tracing off. */
  OTEL_EXPORTER_OTLP_ENDPOINT: z.string().url().optional(),
  // Enables /api/bench/noop, the baseline `npm run bench -- webhooks` compares against.
  AIRLOCK_BENCH: zBool,

  // ---- worker (server/queue/worker.ts), see README "Worker"
  /** Attempts one worker process runs at once. */
  AIRLOCK_WORKER_CONCURRENCY: z.coerce.number().int().min(1).max(100).default(4),
  /** Fallback poll when a NOTIFY is missed; pickup is normally immediate (LISTEN/NOTIFY). */
  AIRLOCK_WORKER_POLL_MS: z.coerce.number().int().min(100).max(60_000).default(2_000),
  /** How often a running attempt renews its lease (heartbeat). */
  AIRLOCK_HEARTBEAT_INTERVAL_MS: z.coerce.number().int().min(100).max(300_000).default(10_000),
  /** An attempt silent for this long is marked lost and retried within its stack's bound. */
  AIRLOCK_ATTEMPT_LEASE_MS: z.coerce.number().int().min(500).max(3_600_000).default(60_000),
  /** How often the reaper looks for lost attempts and jobs held by dead workers. */
  AIRLOCK_REAP_INTERVAL_MS: z.coerce.number().int().min(200).max(600_000).default(15_000),
  /** Agent events are collected this long before one transaction appends them. */
  AIRLOCK_EVENT_BATCH_MS: z.coerce.number().int().min(0).max(1_000).default(20),
  /** A failed attempt's workspace is kept this long for inspection, then removed. */
  AIRLOCK_WORKSPACE_KEEP_FAILED_HOURS: z.coerce.number().min(0).max(24 * 90).default(24),
  /** Replay speed of scripted (demo) agents: 1 = recorded timing. */
  AIRLOCK_SCRIPTED_SPEED: z.coerce.number().positive().max(10_000).default(1),
  /** Live streams (run pages, the runs list, the approvals queue) one account may hold open in a web process. */
  AIRLOCK_MAX_STREAMS_PER_USER: z.coerce.number().int().min(1).max(100_000).default(64),
  /** Largest tRPC request body accepted (413 past it, nothing read beyond it). */
  AIRLOCK_TRPC_MAX_BYTES: z.coerce.number().int().min(16 * 1024).max(64 * 1024 * 1024).default(2 * 1024 * 1024),
  /** Pending approvals expire after this many hours. */
  AIRLOCK_APPROVAL_TTL_HOURS: z.coerce.number().positive().max(30 * 24).default(7 * 24),
  /** The worker prepares the demo repository (local forge + one local CI run) at start. */
  AIRLOCK_DEMO_BOOTSTRAP: zBool,
  /**
   * The bootstrap prepares the demo loop only, not the story's other live scenes (the loop e2e
   * servers: their specs drive that loop, and a held scene fork on its branch would defer a
   * rejection behind it).
   */
  AIRLOCK_DEMO_LOOP_ONLY: zBool,
  /** Local CI: a check running longer than this is stopped and counted as timed out. */
  AIRLOCK_CI_TIMEOUT_MS: z.coerce.number().int().min(1_000).max(6 * 3_600_000).default(10 * 60_000),
  /** Kubernetes runner pools: a kubeconfig file, or `in-cluster`. Unset: kubernetes pools are refused. */
  AIRLOCK_K8S_CONFIG: z.string().optional(),
  /** Image that runs the agent command in a kubernetes pool's Job. */
  AIRLOCK_K8S_AGENT_IMAGE: z.string().default("ghcr.io/airlock/agent-runner:latest"),

  // ---- notifications (server/domain/notifications)
  /** Every notification is also POSTed here as JSON. Unset: in-app only. */
  AIRLOCK_NOTIFICATION_WEBHOOK_URL: z.string().url().optional(),
  /** When set, each POST carries `X-Airlock-Signature-256: sha256=<HMAC of the body>`. */
  AIRLOCK_NOTIFICATION_WEBHOOK_SECRET: z.string().min(16).optional(),
});

export type Env = z.infer<typeof zEnv>;

/** Whether rate limits apply (AIRLOCK_RATE_LIMIT, default on in production only). */
export const rateLimitsOn = (e: Pick<Env, "AIRLOCK_RATE_LIMIT" | "NODE_ENV">) => (e.AIRLOCK_RATE_LIMIT ?? (e.NODE_ENV === "production" ? "on" : "off")) === "on";

function loadEnv(): Env {
  // An empty variable means "not set" (shells and CI files often export VAR=).
  const raw = Object.fromEntries(Object.entries(process.env).filter(([, v]) => v !== ""));
  const parsed = zEnv.superRefine((e, ctx) => {
    if (e.AIRLOCK_GITHUB_TEAM && !e.AIRLOCK_GITHUB_ORG) ctx.addIssue({ code: "custom", path: ["AIRLOCK_GITHUB_TEAM"], message: "a team needs AIRLOCK_GITHUB_ORG" });
  }).safeParse(raw);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${i.path.join(".")}: ${i.message}`);
    throw new Error(`Invalid environment:\n${lines.join("\n")}`);
  }
  return parsed.data;
}

export const env: Env = loadEnv();

/**
 * The value of a granted secret or config map, read from the server environment by name:
 * `AIRLOCK_SECRET_<NAME>` / `AIRLOCK_CONFIG_<NAME>` (name upper-cased, other characters as `_`).
 * The prefix keeps a grant from naming one of Airlock's own settings (DATABASE_URL...).
 * Read at use, never stored or logged.
 */
export function grantedValue(kind: "secret" | "config", name: string): string | undefined {
  const value = process.env[`AIRLOCK_${kind === "secret" ? "SECRET" : "CONFIG"}_${envVarName(name)}`];
  return value === undefined || value === "" ? undefined : value;
}

/** The variable name an agent sees a grant under: `sentry-auth-token` -> `SENTRY_AUTH_TOKEN`. */
export function envVarName(name: string): string {
  const upper = name.toUpperCase().replace(/[^A-Z0-9_]/g, "_");
  return /^[0-9]/.test(upper) ? `_${upper}` : upper;
}

/** The database URL, or a clear error where none is configured. */
export function requireDatabaseUrl(): string {
  if (!env.DATABASE_URL) {
    throw new Error("DATABASE_URL is not set: start Airlock with `npm start`, or set it to a PostgreSQL URL");
  }
  return env.DATABASE_URL;
}

