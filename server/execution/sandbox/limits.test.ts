import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createCommandAdapter } from "@/server/execution/agents/command-adapter";
import type { SessionEvent } from "@/server/execution/agents/types";
import type { SandboxLimits } from "./policy";
import { testSandbox } from "./testing";

// The limits the hostile suite does not reach, through the command adapter and the real
// sandbox: CPU time of the sandbox as a whole, bytes written into its folders, and a single
// file past the limit (the kernel's SIGXFSZ), each ending the attempt with the limit as reason.

let root: string;
beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), "airlock-limits-test-"));
  await mkdir(join(root, "workspace"));
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

async function run(script: string, limits: Partial<SandboxLimits>) {
  const session = await createCommandAdapter({ argv: ["node", "-e", script], killGraceMs: 300 }).start({
    prompt: "",
    contextBundle: null,
    workspaceDir: join(root, "workspace"),
    artifactsDir: join(root, "artifacts"),
    env: {},
    limits: { wallClockMs: 60_000 },
    sandbox: testSandbox({ limits }),
  });
  const events: SessionEvent[] = [];
  for await (const e of session.events) events.push(e);
  const ended = events.filter((e) => e.type === "sandbox").map((e) => e.payload).find((p) => p.phase === "ended");
  return { exit: await session.exit, ended };
}

describe("sandbox limits", () => {
  it("ends a sandbox whose processes together pass the CPU time limit", async () => {
    // Two busy processes: neither passes the limit alone as fast as both together.
    const { exit, ended } = await run("require('child_process').spawn(process.execPath, ['-e', 'for(;;){}']); for(;;){}", { cpuSeconds: 2 });
    expect(exit.status).toBe("failed");
    expect(exit.reason).toMatch(/^killed: CPU time limit 2 s \((\d+ s used|SIGXCPU)\)$/);
    expect(ended).toMatchObject({ phase: "ended", limit: "cpu" });
  }, 30_000);

  it("ends a sandbox that writes past the workspace disk limit", async () => {
    const script = "const fs = require('fs'); const b = Buffer.alloc(4 << 20, 1); for (let i = 0; ; i++) { fs.writeFileSync(process.env.AIRLOCK_WORKSPACE_DIR + '/f' + i, b); }";
    const { exit, ended } = await run(script, { diskMb: 32 });
    expect(exit.status).toBe("failed");
    expect(exit.reason).toMatch(/^killed: workspace disk limit 32 MiB/);
    expect(ended).toMatchObject({ phase: "ended", limit: "disk" });
  }, 30_000);

  it("a single file past the limit is stopped by the kernel, and the attempt says which limit", async () => {
    const script = "require('fs').writeFileSync(process.env.AIRLOCK_WORKSPACE_DIR + '/big', Buffer.alloc(40 << 20, 1))";
    const { exit } = await run(script, { diskMb: 32 });
    expect(exit.status).toBe("failed");
    expect(exit.reason).toMatch(/^killed: workspace disk limit 32 MiB/);
  }, 30_000);
});
