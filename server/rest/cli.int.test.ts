import { spawn } from "node:child_process";
import { createServer, type Server } from "node:http";
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { createPatchApproval, createPatchRepository } from "@/server/domain/approvals/test-fixtures";
import { createApiToken } from "@/server/domain/api-tokens/tokens";
import { appendRunEvents } from "@/server/domain/events/append";
import { getDb } from "@/server/db";
import { scriptedSpec } from "@/server/queue/testing/fixtures";
import { defaultHub } from "@/server/streaming/responses";
import { createRepository, createRun, createUser } from "@/server/testing/factories";
import { sendResponse } from "@/server/web/streams";
import { handleRest } from "./handler";

// The CLI (bin/airlock.mjs, as `npx airlock` runs it) against a running HTTP server serving
// /api/v1 through the REST handler: real sockets, real SSE, the real binary in a child process.

const db = getDb();
let server: Server;
let base = "";

beforeAll(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const headers = new Headers();
      for (const [k, v] of Object.entries(req.headers)) if (typeof v === "string") headers.set(k, v);
      const aborted = new AbortController();
      res.once("close", () => aborted.abort());
      const hasBody = req.method !== "GET" && req.method !== "HEAD";
      const request = new Request(`${base}${req.url}`, { method: req.method, headers, body: hasBody ? Buffer.concat(chunks) : undefined, signal: aborted.signal });
      void handleRest(request).then((response) => sendResponse(res, response, false));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  base = `http://127.0.0.1:${typeof address === "object" && address ? address.port : 0}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
  await defaultHub().stop();
});

type Result = { code: number | null; stdout: string; stderr: string };

function airlock(token: string, args: string[], onStdout?: (text: string) => void): Promise<Result> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ["bin/airlock.mjs", ...args], { env: { ...process.env, AIRLOCK_URL: base, AIRLOCK_TOKEN: token }, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (c: Buffer) => {
      stdout += c.toString();
      onStdout?.(stdout);
    });
    child.stderr.on("data", (c: Buffer) => (stderr += c.toString()));
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

async function tokenFor(role: "viewer" | "maintainer", members: (user: Awaited<ReturnType<typeof createUser>>) => Promise<string>) {
  const owner = await createUser();
  const repositoryId = await members(owner);
  return { owner, repositoryId, token: (await createApiToken({ db, owner, input: { name: "cli", kind: "personal", role, repositoryIds: [repositoryId] } })).token };
}

describe("the airlock CLI against a running server", () => {
  it("runs watch prints a live run to its end and exits", async () => {
    const { repositoryId, token } = await tokenFor("viewer", async (u) => (await createRepository({ members: [[u, "viewer"]] })).id);
    const run = await createRun({ repositoryId, status: "running" });
    await appendRunEvents({ db, runId: run.id, events: [{ type: "message", payload: { role: "assistant", text: "before the watch" } }] });
    let live = false;
    const watching = airlock(token, ["runs", "watch", run.id], (text) => {
      // Once the backlog is on screen, the run goes on live and then ends.
      if (!live && text.includes("before the watch")) {
        live = true;
        void (async () => {
          await appendRunEvents({ db, runId: run.id, events: [{ type: "log", payload: { stream: "stdout", text: "live line" } }] });
          await db.agentDispatchRun.update({ where: { id: run.id }, data: { status: "succeeded" } });
          await appendRunEvents({ db, runId: run.id, events: [{ type: "status", payload: { scope: "run", from: "running", to: "succeeded", reason: "done" } }] });
        })();
      }
    });
    const result = await watching;
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    const lines = result.stdout.trimEnd().split("\n");
    expect(lines[0]).toContain("before the watch");
    expect(lines[1]).toContain("live line");
    expect(lines[2]).toMatch(/status .*running → succeeded/);
    expect(lines.at(-1)).toBe(`Run #${run.number} succeeded.`);
  }, 60_000);

  it("approvals approve with a stale digest is refused and changes nothing; the right digest approves", async () => {
    const owner = await createUser();
    const repo = await createPatchRepository([[owner, "maintainer"]]);
    const { approvalId, artifact } = await createPatchApproval({ repo });
    const token = (await createApiToken({ db, owner, input: { name: "cli", kind: "personal", role: "maintainer", repositoryIds: [repo.repository.id] } })).token;

    const shown = await airlock(token, ["approvals", "show", approvalId]);
    expect(shown.stdout).toContain(artifact.digest);
    const stale = await airlock(token, ["approvals", "approve", approvalId, "--digest", "sha256:0000000000000000000000000000000000000000000000000000000000000000", "--head-sha", repo.sha]);
    expect(stale.code).toBe(1);
    expect(stale.stderr).toMatch(/^airlock: This approval is stale.*\(stale\)$/m);
    expect((await db.approvalRequest.findUniqueOrThrow({ where: { id: approvalId } })).status).toBe("pending");
    const ok = await airlock(token, ["approvals", "approve", approvalId, "--digest", artifact.digest, "--head-sha", repo.sha]);
    expect(ok.stderr).toBe("");
    expect(ok.stdout.trim()).toBe("Approved.");
  }, 60_000);

  it("stacks apply shows the diff, and applying the same file twice changes nothing the second time", async () => {
    const { token } = await tokenFor("maintainer", async (u) => (await createRepository({ members: [[u, "maintainer"]] })).id);
    const dir = await mkdtemp(join(tmpdir(), "airlock-cli-"));
    const file = join(dir, "stacks.yaml");
    const name = `cli-stack-${Date.now()}`;
    await writeFile(file, stringify({ stacks: [{ name, description: "from a file", spec: scriptedSpec() }] }));

    const first = await airlock(token, ["stacks", "apply", file]);
    expect(first.stderr).toBe("");
    expect(first.stdout).toContain(`+ ${name} (create)`);
    const stack = await db.agentStack.findUniqueOrThrow({ where: { name } });
    expect(stack.version).toBe(1);

    const second = await airlock(token, ["stacks", "apply", file]);
    expect(second.stdout).toContain(`= ${name} (unchanged)`);
    expect(second.stdout).toContain("Nothing to change.");
    expect((await db.agentStack.findUniqueOrThrow({ where: { name } })).version).toBe(1);

    // An exported file round-trips as unchanged too; an edit shows its diff and saves version 2.
    const exported = await airlock(token, ["stacks", "export", "-o", join(dir, "export.yaml")]);
    expect(exported.code).toBe(0);
    expect((await airlock(token, ["stacks", "apply", join(dir, "export.yaml")])).stdout).toContain("Nothing to change.");
    await writeFile(file, stringify({ stacks: [{ name, description: "from a file", spec: scriptedSpec({ model: "scripted-2" }) }] }));
    const edited = await airlock(token, ["stacks", "apply", file]);
    expect(edited.stdout).toContain(`~ ${name} (update)`);
    expect(edited.stdout).toMatch(/spec\.model:\n\s+- scripted\n\s+\+ scripted-2/);
    expect((await db.agentStack.findUniqueOrThrow({ where: { name } })).version).toBe(2);
  }, 90_000);

  it("a revoked or missing token exits 3 with the server's reason", async () => {
    const result = await airlock("airlock_not-a-real-token", ["runs", "list"]);
    expect(result.code).toBe(3);
    expect(result.stderr).toContain("Unknown API token");
  }, 30_000);
});
