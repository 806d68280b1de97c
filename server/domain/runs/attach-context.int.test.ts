// "Attach context" through the procedure: maintainers only, on a live run, the text redacted
// before it is stored (event and audit), once per attachment id however often it is retried.
import { randomUUID } from "node:crypto";
import { TRPCError } from "@trpc/server";
import { beforeAll, describe, expect, it } from "vitest";
import type { SessionUser } from "@/server/auth/roles";
import { getDb } from "@/server/db";
import { callHttp } from "@/server/testing/config-factories";
import { callerFor, createRepository, createRun, createUser } from "@/server/testing/factories";

const db = getDb();
let viewer: SessionUser;
let maintainer: SessionUser;
let repositoryId = "";

beforeAll(async () => {
  [viewer, maintainer] = await Promise.all([createUser(), createUser()]);
  repositoryId = (await createRepository({ members: [[viewer, "viewer"], [maintainer, "maintainer"]] })).id;
});

const TOKEN = `ghp_${"A1b2C3d4E5".repeat(4)}`;
const note = (over: Record<string, unknown> = {}) => ({ attachmentId: randomUUID(), kind: "note" as const, title: "", url: "", path: "", startLine: "", text: "Look at the flaky clock.", ...over });

async function events(runId: string) {
  return db.runEvent.findMany({ where: { runId, type: "context_attached" }, orderBy: { seq: "asc" } });
}

describe("runs.attachContext", () => {
  it("appends a redacted context_attached event and an audit entry without the content", async () => {
    const run = await createRun({ repositoryId, status: "running" });
    const res = await callerFor(maintainer).runs.attachContext({
      runId: run.id,
      ...note({ kind: "file_excerpt", title: `Config with ${TOKEN}`, path: "src/ci/env.ts", startLine: "12", text: `export const token = "${TOKEN}";` }),
    });
    expect(res).toMatchObject({ duplicate: false, redactions: 2 });
    const [event] = await events(run.id);
    expect(event!.seq).toBe(res.seq);
    const stored = JSON.stringify(event!.payload);
    expect(stored).not.toContain(TOKEN);
    expect(event!.payload).toMatchObject({ kind: "file_excerpt", path: "src/ci/env.ts", startLine: 12, url: null, attachedBy: maintainer.email, redactions: 2 });
    const audit = await db.auditEntry.findFirstOrThrow({ where: { objectId: run.id, action: "run.attach_context" } });
    expect(audit).toMatchObject({ actorUserId: maintainer.id, actor: maintainer.email, repositoryId });
    expect(JSON.stringify(audit.detail)).not.toContain(TOKEN);
    expect(audit.detail).toMatchObject({ kind: "file_excerpt", seq: res.seq, redactions: 2 });
  });

  it("attaches once per attachment id, however often or concurrently the request is retried", async () => {
    const run = await createRun({ repositoryId, status: "awaiting_approval" });
    const input = { runId: run.id, ...note({ kind: "link", url: "https://ci.example/runs/42", text: "the red run" }) };
    const results = await Promise.all([1, 2, 3, 4].map(() => callerFor(maintainer).runs.attachContext(input)));
    expect(results.filter((r) => !r.duplicate)).toHaveLength(1);
    expect(new Set(results.map((r) => r.seq)).size).toBe(1);
    const again = await callerFor(maintainer).runs.attachContext(input);
    expect(again).toMatchObject({ duplicate: true, seq: results[0]!.seq });
    expect(await events(run.id)).toHaveLength(1);
    expect(await db.auditEntry.count({ where: { objectId: run.id, action: "run.attach_context" } })).toBe(1);
  });

  it("refuses viewers, finished runs and unsafe input, storing nothing", async () => {
    const run = await createRun({ repositoryId, status: "running" });
    const denied = await callerFor(viewer).runs.attachContext({ runId: run.id, ...note() }).catch((e: unknown) => e);
    expect((denied as TRPCError).code).toBe("FORBIDDEN");

    const done = await createRun({ repositoryId, status: "succeeded" });
    const late = await callerFor(maintainer).runs.attachContext({ runId: done.id, ...note() }).catch((e: unknown) => e);
    expect((late as TRPCError).code).toBe("CONFLICT");
    expect((late as TRPCError).message).toMatch(/The run is succeeded; context is attached to a running run/);

    const http = await callHttp(maintainer, "runs.attachContext", { runId: run.id, ...note({ kind: "link", url: "javascript:alert(1)" }) });
    expect(http.status).toBe(400);
    expect(http.error?.data.fieldErrors?.url).toEqual(["An http(s) URL"]);
    const escape = await callHttp(maintainer, "runs.attachContext", { runId: run.id, ...note({ kind: "file_excerpt", path: "../../etc/passwd", text: "x" }) });
    expect(escape.error?.data.fieldErrors?.path?.[0]).toMatch(/inside the repository/);
    expect((await events(run.id)).length + (await events(done.id)).length).toBe(0);
  });
});
