import { mkdir, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { processesIn } from "./monitor";

// Nothing of a sandbox outlives its attempt. bubblewrap is the init of the sandbox's pid
// namespace (every process inside dies with it) and dies with the worker (--die-with-parent).
// As a last line, each live sandbox leaves a record in the data folder; a worker that starts
// kills every sandbox whose worker is gone (a record whose owner is alive belongs to another
// worker on this machine and is left alone).

type Record = { outerPid: number; outerStart: string; namespace: string | null; ownerPid: number; ownerStart: string };

/** The start time of a process (clock ticks since boot, field 22 of /proc/<pid>/stat), or null. */
export async function processStart(pid: number): Promise<string | null> {
  const text = await readFile(`/proc/${pid}/stat`, "utf8").catch(() => null);
  return text ? (text.slice(text.lastIndexOf(")") + 2).split(" ")[19] ?? null) : null;
}

const alive = async (pid: number, start: string) => (await processStart(pid)) === start;

export async function recordSandbox(stateDir: string, id: string, outerPid: number, namespace: string | null): Promise<() => Promise<void>> {
  await mkdir(stateDir, { recursive: true });
  const file = join(stateDir, `${id}.json`);
  const record: Record = {
    outerPid,
    outerStart: (await processStart(outerPid)) ?? "",
    namespace,
    ownerPid: process.pid,
    ownerStart: (await processStart(process.pid)) ?? "",
  };
  await writeFile(file, JSON.stringify(record));
  return () => rm(file, { force: true });
}

/** Kills what dead workers' sandboxes left running; returns how many sandboxes it ended. */
export async function reapOrphanedSandboxes(stateDir: string): Promise<number> {
  let reaped = 0;
  for (const name of await readdir(stateDir).catch(() => [] as string[])) {
    if (!name.endsWith(".json")) continue;
    const file = join(stateDir, name);
    const record = JSON.parse((await readFile(file, "utf8").catch(() => "null")) ?? "null") as Record | null;
    if (record && (await alive(record.ownerPid, record.ownerStart))) continue;
    if (record) {
      let killed = false;
      if (await alive(record.outerPid, record.outerStart)) {
        process.kill(record.outerPid, "SIGKILL");
        killed = true;
      }
      for (const pid of record.namespace ? await processesIn(record.namespace) : []) {
        try {
          process.kill(pid, "SIGKILL");
          killed = true;
        } catch {
          /* already gone */
        }
      }
      if (killed) reaped++;
    }
    await rm(file, { force: true });
  }
  return reaped;
}
