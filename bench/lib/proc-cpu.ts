// CPU seconds of a process and everything it started (/proc), to compare costs independently of
// how busy the rest of the machine is. Linux only.
import { readdirSync, readFileSync } from "node:fs";

const TICKS_PER_SECOND = 100;

export function treeCpuSeconds(rootPid: number | undefined): number {
  if (rootPid === undefined) return 0;
  const stats = new Map<number, { ppid: number; ticks: number }>();
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const raw = readFileSync(`/proc/${entry}/stat`, "utf8");
      const fields = raw.slice(raw.lastIndexOf(")") + 2).split(" ");
      // utime + stime, plus cutime + cstime: reaped children (PostgreSQL's finished backends) count.
      stats.set(Number(entry), { ppid: Number(fields[1]), ticks: Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14]) });
    } catch {
      /* exited meanwhile */
    }
  }
  let ticks = 0;
  const todo = [rootPid];
  while (todo.length > 0) {
    const pid = todo.pop()!;
    ticks += stats.get(pid)?.ticks ?? 0;
    for (const [child, s] of stats) if (s.ppid === pid) todo.push(child);
  }
  return ticks / TICKS_PER_SECOND;
}

/** The parent of a process (PostgreSQL's postmaster, for one of its backends). */
export function parentPid(pid: number): number | undefined {
  try {
    const raw = readFileSync(`/proc/${pid}/stat`, "utf8");
    return Number(raw.slice(raw.lastIndexOf(")") + 2).split(" ")[1]);
  } catch {
    return undefined;
  }
}
