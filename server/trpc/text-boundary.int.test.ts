// Bad text is a 400, never a 500, on every procedure: a NUL, an unpaired surrogate or hostile
// nesting in the input is refused by the text boundary before zod or PostgreSQL sees it, with the
// field named, and nothing changes. Through the real route (HTTP status) for the procedures the
// adversarial test found answering 500, and through the caller for every procedure of the router.
import { beforeAll, describe, expect, it } from "vitest";
import { TRPCError } from "@trpc/server";
import { POST, GET } from "@/app/api/trpc/[trpc]/route";
import { getAuth } from "@/server/auth";
import type { SessionUser } from "@/server/auth/roles";
import { getDb } from "@/server/db";
import { callerFor, createRepository, createRun, createUser, TEST_PASSWORD } from "@/server/testing/factories";
import { appRouter } from "./root";

const db = getDb();
const ORIGIN = "http://localhost:3000";
let admin: SessionUser;
let cookie: string;
let runId: string;
let repositoryId: string;

beforeAll(async () => {
  admin = await createUser({ isAdmin: true });
  const repo = await createRepository({ members: [[admin, "admin"]] });
  repositoryId = repo.id;
  runId = (await createRun({ repositoryId, status: "running" })).id;
  const res = await getAuth().api.signInEmail({ body: { email: admin.email, password: TEST_PASSWORD }, asResponse: true });
  cookie = res.headers.getSetCookie().map((c) => c.split(";")[0]).join("; ");
});

const query = (path: string, input: unknown) =>
  GET(new Request(`${ORIGIN}/api/trpc/${path}?input=${encodeURIComponent(JSON.stringify({ json: input }))}`, { headers: { cookie, host: "localhost:3000" } }));

const mutation = (path: string, body: string) =>
  POST(new Request(`${ORIGIN}/api/trpc/${path}`, { method: "POST", headers: { cookie, host: "localhost:3000", origin: ORIGIN, "content-type": "application/json" }, body }));

async function refused(res: Response) {
  const body = (await res.json()) as { error: { json: { message: string; data: { code: string; reason: string | null; httpStatus: number } } } };
  return { status: res.status, ...body.error.json.data, message: body.error.json.message };
}

const NUL = "a\u0000b";

describe("the procedures that answered 500 on a NUL now answer 400 and change nothing", () => {
  const auditBefore = () => db.auditEntry.count();
  const cases: [string, "query" | "mutation", () => unknown][] = [
    ["runs.byId", "query", () => ({ runId: NUL })],
    ["audit.list", "query", () => ({ actor: NUL })],
    ["fixLoops.byBranch", "query", () => ({ repositoryId, branch: NUL })],
    ["notifications.markRead", "mutation", () => ({ ids: [NUL] })],
    ["approvals.approve", "mutation", () => ({ approvalId: NUL, artifactDigest: null, headSha: null })],
    ["runs.fork", "mutation", () => ({ runId, prompt: `fix it ${NUL}` })],
    ["stacks.create", "mutation", () => ({ name: `stack-${NUL}`, spec: {} })],
    ["runs.attachContext", "mutation", () => ({ runId, attachmentId: crypto.randomUUID(), kind: "note", title: "t", url: "", path: "", startLine: "", text: `pasted ${NUL}` })],
  ];
  it.each(cases)("%s", async (path, kind, input) => {
    const before = { audit: await auditBefore(), runs: await db.agentDispatchRun.count(), events: await db.runEvent.count() };
    const res = kind === "query" ? await query(path, input()) : await mutation(path, JSON.stringify({ json: input() }));
    const r = await refused(res);
    expect(r).toMatchObject({ status: 400, code: "BAD_REQUEST", reason: "invalid_text" });
    expect(r.message).toMatch(/contains a NUL character/);
    expect({ audit: await auditBefore(), runs: await db.agentDispatchRun.count(), events: await db.runEvent.count() }).toEqual(before);
  });

  it("an unpaired surrogate (JSON-escaped, as a hostile client sends it) is a 400 naming the field", async () => {
    const res = await mutation("runs.fork", `{"json":{"runId":"${runId}","prompt":"x \\ud800 y"}}`);
    const r = await refused(res);
    expect(r).toMatchObject({ status: 400, reason: "invalid_text" });
    expect(r.message).toBe("Invalid input: prompt contains an unpaired UTF-16 surrogate (not valid Unicode).");
  });

  it("deep JSON is a 400, not a 500: past 64 levels the boundary names it; 100,000 levels fail the body's parse", async () => {
    const before = await db.agentStack.count();
    const deep = (n: number) => `${"[".repeat(n)}${"]".repeat(n)}`;
    const r = await refused(await mutation("stacks.create", `{"json":{"name":"deep","spec":${deep(500)}}}`));
    expect(r).toMatchObject({ status: 400, reason: "invalid_text" });
    expect(r.message).toMatch(/^Invalid input: spec(\.0)+ is nested more than 64 levels deep\.$/);
    // superjson's own walk gives up on the body first here: a 400 that says so, not a stack overflow.
    const res = await mutation("stacks.create", `{"json":{"name":"deep","spec":${deep(100_000)}}}`);
    expect(await refused(res)).toMatchObject({ status: 400, reason: "invalid_text", message: "Invalid input: the body is nested too deeply to read." });
    expect(await db.agentStack.count()).toBe(before);
  });
});

describe("every procedure of the router", () => {
  it("refuses a NUL in its input with BAD_REQUEST (invalid_text) before anything else runs", async () => {
    const caller = callerFor(admin) as unknown as Record<string, Record<string, (input: unknown) => Promise<unknown>>>;
    const paths = Object.keys(appRouter._def.procedures);
    expect(paths.length).toBeGreaterThan(60);
    const wrong: string[] = [];
    for (const path of paths) {
      const [ns, name] = path.split(".") as [string, string];
      try {
        await caller[ns]![name]!({ field: NUL, nested: [{ [NUL]: 1 }] });
        wrong.push(`${path}: accepted`);
      } catch (err) {
        const cause = err instanceof TRPCError ? (err.cause as { reason?: string } | undefined) : undefined;
        if (!(err instanceof TRPCError) || err.code !== "BAD_REQUEST" || cause?.reason !== "invalid_text") wrong.push(`${path}: ${String(err)}`);
      }
    }
    expect(wrong).toEqual([]);
  });
});
