import { z } from "zod";

// What a sandbox enforces, as data: the network mode with its allowed hosts, and the limits.
// No Node imports: the pool forms and the run view read these schemas and formatters too.

export const zNetworkMode = z.enum(["none", "restricted", "open"]);
export type NetworkMode = z.infer<typeof zNetworkMode>;

/**
 * An allowed host: `name`, `*.domain` or an IP literal, each with an optional `:port`
 * (`api.anthropic.com`, `*.githubusercontent.com:443`, `127.0.0.1:4000`, `[::1]:4000`).
 */
export const zAllowedHost = z
  .string()
  .trim()
  .toLowerCase()
  .max(260)
  .regex(
    /^(?:\*\.)?(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)*[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?::\d{1,5})?$|^\[[0-9a-f:.]+\](?::\d{1,5})?$/,
    "A host name, *.domain or IP literal, with an optional :port",
  );

export const zSandboxLimits = z.object({
  /** Resident memory of every process in the sandbox together. */
  memoryMb: z.number().int().min(64).max(1024 * 1024),
  /** Processes and threads at once. */
  processes: z.number().int().min(16).max(100_000),
  /** CPU time of every process together, in seconds. */
  cpuSeconds: z.number().int().min(1).max(7 * 24 * 3600),
  /** Bytes on disk in the writable folders (workspace, artifacts, HOME, /tmp). */
  diskMb: z.number().int().min(16).max(10 * 1024 * 1024),
});
export type SandboxLimits = z.infer<typeof zSandboxLimits>;

/**
 * Defaults for a 2-core, 24 GiB machine running a pool's default concurrency (2) on each of
 * a couple of pools: 4 GiB each leaves the machine room; 512 tasks fit a test run with
 * worker threads; an hour of CPU is both cores busy for a 30-minute wall clock.
 */
export const defaultSandboxLimits: SandboxLimits = { memoryMb: 4096, processes: 512, cpuSeconds: 3600, diskMb: 10240 };

export type SandboxNetwork = { mode: NetworkMode; allowedHosts: string[] };

export type LimitName = "memory" | "processes" | "cpu" | "disk";

export const formatMb = (mb: number) => (mb >= 1024 && mb % 1024 === 0 ? `${mb / 1024} GiB` : mb >= 1024 ? `${(mb / 1024).toFixed(1)} GiB` : `${mb} MiB`);

/** "memory limit 4 GiB", the words an exit reason and the run view use. */
export function describeLimit(name: LimitName, limits: SandboxLimits): string {
  switch (name) {
    case "memory":
      return `memory limit ${formatMb(limits.memoryMb)}`;
    case "processes":
      return `process limit ${limits.processes}`;
    case "cpu":
      return `CPU time limit ${limits.cpuSeconds} s`;
    case "disk":
      return `workspace disk limit ${formatMb(limits.diskMb)}`;
  }
}

/** The API host each model provider's agents talk to (a stack may add a gateway: *_BASE_URL). */
export const modelProviderHosts: Record<string, string[]> = {
  anthropic: ["api.anthropic.com"],
  openai: ["api.openai.com"],
  google: ["generativelanguage.googleapis.com"],
  local: [],
};
