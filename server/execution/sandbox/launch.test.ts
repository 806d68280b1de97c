import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterEach, describe, expect, it } from "vitest";
import { launchAgentProcess, type LaunchRequest, type SandboxedProcess } from "./launch";
import { testSandbox } from "./testing";

// A process that ends while the launch is still setting up (a fast check, a command that fails
// at once) must keep its output and be seen to exit: Node drops the output of a child nobody
// reads when it exits, and emits its exit once. Before the launch took both at spawn, such a
// process lost its output and its caller waited for an exit that had already happened.

const dirs: string[] = [];
afterEach(async () => {
  for (const d of dirs.splice(0)) await rm(d, { recursive: true, force: true });
});

async function request(kind: "bubblewrap" | "none", script: string): Promise<LaunchRequest> {
  const session = await mkdtemp(join(tmpdir(), "airlock-launch-"));
  dirs.push(session);
  const sandbox = testSandbox();
  if (sandbox.kind !== "bubblewrap") throw new Error("testSandbox is a bubblewrap sandbox");
  const spec = {
    argv: ["/bin/sh", "-c", script],
    env: { PATH: "/usr/bin:/bin" },
    cwd: session,
    writablePaths: [session],
    readOnlyPaths: sandbox.readOnlyPaths,
    hiddenPaths: sandbox.hiddenPaths,
    network: sandbox.network,
    limits: sandbox.limits,
    sessionDir: join(session, "session"),
    stateDir: sandbox.stateDir,
  };
  return kind === "none" ? { kind, reason: "test", ...spec } : { kind, ...spec };
}

const read = (s: NodeJS.ReadableStream) => {
  let text = "";
  s.on("data", (c: Buffer) => (text += c.toString()));
  return () => text;
};

describe.each(["bubblewrap", "none"] as const)("launchAgentProcess (%s)", (kind) => {
  it("keeps the output and the exit of a process that ended before anyone read it", { timeout: 30_000 }, async () => {
    const proc: SandboxedProcess = await launchAgentProcess(await request(kind, "echo out-line; echo err-line >&2; exit 3"));
    // Long after the process ended (the worker was busy), the caller starts reading.
    await sleep(500);
    const out = read(proc.stdout);
    const err = read(proc.stderr);
    const exit = await Promise.race([proc.closed, sleep(10_000).then(() => "never closed" as const)]);
    await proc.finish();
    expect(exit).toEqual({ code: 3, signal: null });
    expect(out()).toBe("out-line\n");
    expect(err()).toBe("err-line\n");
  });

  it("ends stdin for a process that reads it, and reports a kill", { timeout: 30_000 }, async () => {
    const proc = await launchAgentProcess(await request(kind, "cat; sleep 60"));
    const out = read(proc.stdout);
    proc.stderr.resume();
    proc.stdin.end("from stdin\n");
    await sleep(300);
    proc.signal("SIGKILL");
    const exit = await Promise.race([proc.closed, sleep(10_000).then(() => "never closed" as const)]);
    await proc.finish();
    expect(exit).not.toBe("never closed");
    expect(out()).toBe("from stdin\n");
  });

  it("returns from the launch of many processes that end at once (the status and the exit are never missed)", { timeout: 60_000 }, async () => {
    const requests = await Promise.all(Array.from({ length: 16 }, () => request(kind, "exit 0")));
    const ended = await Promise.race([
      Promise.all(
        requests.map(async (r) => {
          const proc = await launchAgentProcess(r);
          proc.stdout.resume();
          proc.stderr.resume();
          const exit = await proc.closed;
          await proc.finish();
          return exit.code;
        }),
      ),
      sleep(45_000).then(() => "a launch or an exit was never seen" as const),
    ]);
    expect(ended).toEqual(Array.from({ length: 16 }, () => 0));
  });
});
