import { spawn } from "node:child_process";
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { processStart, reapOrphanedSandboxes, recordSandbox } from "./lifetime";

// The last line of "nothing outlives its attempt": a starting worker ends the sandboxes a dead
// worker left running, and leaves a live worker's alone.

const dir = mkdtempSync(join(tmpdir(), "airlock-lifetime-test-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe("reapOrphanedSandboxes", () => {
  it("kills a sandbox whose worker is gone and removes its record; a live worker's stays", async () => {
    const orphan = spawn("sleep", ["60"], { stdio: "ignore" });
    const orphanExited = new Promise((r) => orphan.once("exit", r));
    const owned = spawn("sleep", ["60"], { stdio: "ignore" });
    await new Promise((r) => setTimeout(r, 100));
    // A record as a worker that has since died wrote it (its pid names no process, or another one).
    writeFileSync(
      join(dir, "orphan.json"),
      JSON.stringify({ outerPid: orphan.pid, outerStart: await processStart(orphan.pid!), namespace: null, ownerPid: 2 ** 22 + 1, ownerStart: "0" }),
    );
    const forget = await recordSandbox(dir, "owned", owned.pid!, null);
    expect(await reapOrphanedSandboxes(dir)).toBe(1);
    await orphanExited;
    expect(alive(orphan.pid!)).toBe(false);
    expect(alive(owned.pid!)).toBe(true);
    expect(readdirSync(dir)).toEqual(["owned.json"]);
    await forget();
    owned.kill("SIGKILL");
  });

  it("never kills a process that merely reused a recorded pid", async () => {
    const other = spawn("sleep", ["60"], { stdio: "ignore" });
    await new Promise((r) => setTimeout(r, 100));
    writeFileSync(join(dir, "reused.json"), JSON.stringify({ outerPid: other.pid, outerStart: "1", namespace: null, ownerPid: 2 ** 22 + 1, ownerStart: "0" }));
    expect(await reapOrphanedSandboxes(dir)).toBe(0);
    expect(alive(other.pid!)).toBe(true);
    expect(readdirSync(dir).filter((f) => f === "reused.json")).toEqual([]);
    other.kill("SIGKILL");
  });
});
