import type { Db } from "@/server/db";
import type { AttemptRegistry } from "@/server/execution/runner/attempt-registry";
import type { RunnerSettings } from "@/server/execution/runner/settings";

// What every task handler of one worker process shares.

export type WorkerSettings = RunnerSettings & {
  /** Attempts this process runs at once (separate from graphile-worker's job concurrency). */
  maxAttempts: number;
  leaseMs: number;
  reapIntervalMs: number;
  ciTimeoutMs: number;
  /** node_modules linked into local CI checkouts (the CI image's toolchain). */
  toolchainNodeModules: string | null;
};

export type WorkerContext = {
  db: Db;
  settings: WorkerSettings;
  registry: AttemptRegistry;
  /** host/pid/worker pool id: stored as an attempt's runnerRef. */
  workerRef: () => string;
  /** Attempts started by this process and not yet finished (awaited at shutdown). */
  inflight: Set<Promise<unknown>>;
  /** Dispatch handlers between "is there room?" and the attempt being in `inflight`. */
  claiming: { count: number };
  log: (line: string) => void;
};
