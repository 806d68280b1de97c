import { lstat, readdir, readFile, readlink } from "node:fs/promises";
import { join } from "node:path";
import { describeLimit, formatMb, type LimitName, type SandboxLimits } from "./policy";

// Watches one sandbox from the host and ends it when a limit is passed. The kernel enforces
// the per-process bounds (rlimits set before bubblewrap starts: address space, processes,
// CPU seconds, file size); this adds the bounds over the whole sandbox that rlimits cannot
// express: resident memory and CPU time of all its processes together, its task count, and
// the bytes in its writable folders. Its processes are the init's descendants: a daemon that
// detached is re-parented to the init of its pid namespace, so it is still counted.

export type LimitHit = { limit: LimitName; reason: string };

export type SandboxUsage = { memoryMb: number; processes: number; cpuSeconds: number; diskMb: number };

const pageBytes = 4096;
const clockTicks = 100; // USER_HZ on Linux
const mb = (bytes: number) => bytes / (1024 * 1024);

/** The pid namespace of a process (its /proc link), or null when it is gone. */
export const pidNamespaceOf = (pid: number) => readlink(`/proc/${pid}/ns/pid`).catch(() => null);

/** Host pids of every process in a pid namespace. */
export async function processesIn(namespace: string): Promise<number[]> {
  const pids: number[] = [];
  for (const name of await readdir("/proc").catch(() => [] as string[])) {
    if (!/^\d+$/.test(name)) continue;
    if ((await pidNamespaceOf(Number(name))) === namespace) pids.push(Number(name));
  }
  return pids;
}

/**
 * Host pids of a process and all its descendants, from /proc/<pid>/task/<tid>/children. Used on
 * the sandbox's init: its pid namespace re-parents every orphan to it, so nothing inside escapes
 * the walk, and it costs what the sandbox holds, not what the machine runs.
 */
export async function processTree(root: number, max = 100_000): Promise<number[]> {
  const seen: number[] = [];
  let level = [root];
  while (level.length > 0 && seen.length < max) {
    seen.push(...level);
    const next = await Promise.all(
      level.map(async (pid) => {
        const tasks = await readdir(`/proc/${pid}/task`).catch(() => [] as string[]);
        const lists = await Promise.all(tasks.map((t) => readFile(`/proc/${pid}/task/${t}/children`, "utf8").catch(() => "")));
        return lists.flatMap((l) => l.split(" ").filter(Boolean).map(Number));
      }),
    );
    level = next.flat();
  }
  return seen;
}

/** utime+stime+cutime+cstime (ticks), threads and resident pages from /proc/<pid>/stat. */
async function statOf(pid: number): Promise<{ ticks: number; threads: number; rssPages: number } | null> {
  const text = await readFile(`/proc/${pid}/stat`, "utf8").catch(() => null);
  if (!text) return null;
  // Fields after the command name (which may hold spaces and parentheses) start at its last ")".
  const f = text.slice(text.lastIndexOf(")") + 2).split(" ");
  const n = (i: number) => Number(f[i - 3] ?? 0); // proc(5) numbers fields from 1; f[0] is field 3
  return { ticks: n(14) + n(15) + n(16) + n(17), threads: n(20), rssPages: n(24) };
}

/** Bytes on disk under the folders (allocated blocks; links are not followed), at most `maxEntries` visited. */
export async function diskUsage(paths: string[], maxEntries = 500_000): Promise<number> {
  let bytes = 0;
  let visited = 0;
  const seen = new Set<string>();
  const walk = async (path: string): Promise<void> => {
    if (visited++ > maxEntries) return;
    const info = await lstat(path).catch(() => null);
    if (!info) return;
    const key = `${info.dev}:${info.ino}`;
    if (seen.has(key)) return;
    seen.add(key);
    bytes += info.blocks * 512;
    if (info.isDirectory()) for (const e of await readdir(path).catch(() => [] as string[])) await walk(join(path, e));
  };
  for (const p of paths) await walk(p);
  return bytes;
}

export type SandboxMonitor = {
  stop(): void;
  /** Measures the writable folders once more (at exit: a write the kernel cut short at the limit counts). */
  checkDisk(): Promise<void>;
  /** The first limit passed, if any. */
  readonly hit: LimitHit | null;
  readonly peak: SandboxUsage;
};

export function startMonitor(opts: {
  /** The sandbox's init (its host pid). */
  initPid: number;
  limits: SandboxLimits;
  diskPaths: string[];
  onLimit: (hit: LimitHit) => void;
  intervalMs?: number;
  diskIntervalMs?: number;
}): SandboxMonitor {
  const { limits } = opts;
  const peak: SandboxUsage = { memoryMb: 0, processes: 0, cpuSeconds: 0, diskMb: 0 };
  let hit: LimitHit | null = null;
  let stopped = false;
  let lastDisk = 0;
  let busy = false;

  const breach = (limit: LimitName, used: string) => {
    if (hit) return;
    hit = { limit, reason: `killed: ${describeLimit(limit, limits)} (${used})` };
    opts.onLimit(hit);
  };

  const checkDisk = async () => {
    lastDisk = Date.now();
    const disk = mb(await diskUsage(opts.diskPaths));
    peak.diskMb = Math.max(peak.diskMb, disk);
    // The kernel stops a single file at the limit (RLIMIT_FSIZE), so reaching it counts.
    if (disk >= limits.diskMb) breach("disk", `${formatMb(Math.round(disk))} written`);
  };

  const sample = async () => {
    if (busy || stopped || hit) return;
    busy = true;
    try {
      let ticks = 0;
      let threads = 0;
      let rss = 0;
      for (const pid of await processTree(opts.initPid)) {
        const s = await statOf(pid);
        if (!s) continue;
        ticks += s.ticks;
        threads += s.threads;
        rss += s.rssPages;
      }
      const usage = { memoryMb: mb(rss * pageBytes), processes: threads, cpuSeconds: ticks / clockTicks };
      peak.memoryMb = Math.max(peak.memoryMb, usage.memoryMb);
      peak.processes = Math.max(peak.processes, usage.processes);
      peak.cpuSeconds = Math.max(peak.cpuSeconds, usage.cpuSeconds);
      if (usage.memoryMb >= limits.memoryMb) breach("memory", `${formatMb(Math.round(usage.memoryMb))} in use`);
      // The kernel caps tasks at the limit (RLIMIT_NPROC), so a runaway sits just under it.
      else if (usage.processes >= Math.floor(limits.processes * 0.95)) breach("processes", `${usage.processes} processes and threads`);
      else if (usage.cpuSeconds >= limits.cpuSeconds) breach("cpu", `${Math.round(usage.cpuSeconds)} s used`);
      if (!hit && Date.now() - lastDisk >= (opts.diskIntervalMs ?? 2000)) await checkDisk();
    } finally {
      busy = false;
    }
  };

  const timer = setInterval(() => void sample(), opts.intervalMs ?? 200);
  timer.unref();
  void sample();
  return {
    stop: () => {
      stopped = true;
      clearInterval(timer);
    },
    checkDisk: () => (hit ? Promise.resolve() : checkDisk()),
    get hit() {
      return hit;
    },
    peak,
  };
}
