import { describe, expect, it } from "vitest";
import { GET as consoleExport } from "@/app/api/runs/[runId]/transcript/route";
import { POST as trpcPost } from "@/app/api/trpc/[trpc]/route";
import { getAuth } from "@/server/auth";
import type { SessionUser } from "@/server/auth/roles";
import { getDb } from "@/server/db";
import { createPatchApproval, createPatchRepository } from "@/server/domain/approvals/test-fixtures";
import { createApiToken, revokeApiToken } from "@/server/domain/api-tokens/tokens";
import { appendRunEvents } from "@/server/domain/events/append";
import { callerFor, createRepository, createRun, createUser, TEST_PASSWORD } from "@/server/testing/factories";
import { handleRest } from "./handler";
import { openApiDocument } from "./openapi";

// The REST API through its real handler: tokens and their scopes, the one credential it takes.

const db = getDb();
const origin = "http://localhost:3000";

const rest = (token: string | null, method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
  handleRest(
    new Request(`${origin}/api/v1${path}`, {
      method,
      headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...(body ? { "content-type": "application/json" } : {}), ...headers },
      body: body ? JSON.stringify(body) : undefined,
    }),
  );

async function tokenFor(owner: SessionUser, repositoryIds: string[], role: "viewer" | "maintainer" | "admin" = "viewer") {
  return (await createApiToken({ db, owner, input: { name: "ci", kind: "personal", role, repositoryIds } })).token;
}

async function cookieFor(user: SessionUser) {
  const res = await getAuth().api.signInEmail({ body: { email: user.email, password: TEST_PASSWORD }, asResponse: true });
  return res.headers.getSetCookie().map((c) => c.split(";")[0]).join("; ");
}

describe("REST tokens and scopes", () => {
  it("a token for one repository cannot read another the owner can", async () => {
    const owner = await createUser();
    const [a, b] = [await createRepository({ members: [[owner, "maintainer"]] }), await createRepository({ members: [[owner, "maintainer"]] })];
    const [runA, runB] = [await createRun({ repositoryId: a.id }), await createRun({ repositoryId: b.id })];
    const token = await tokenFor(owner, [a.id]);

    const ownRun = await rest(token, "GET", `/runs/${runA.id}`);
    expect(ownRun.status).toBe(200);
    expect((await ownRun.json()).id).toBe(runA.id);

    expect((await rest(token, "GET", `/runs/${runB.id}`)).status).toBe(403);
    expect((await rest(token, "GET", `/runs/${runB.id}/events`)).status).toBe(403);
    expect((await rest(token, "GET", `/runs/${runB.id}/transcript.jsonl`)).status).toBe(403);
    expect((await rest(token, "GET", `/runs?repositoryId=${b.id}`)).status).toBe(403);
    const list = await (await rest(token, "GET", "/runs?limit=50")).json();
    expect(list.items.map((r: { id: string }) => r.id)).toEqual([runA.id]);
  });

  it("a revoked token fails, and so do unknown ones", async () => {
    const owner = await createUser();
    const repo = await createRepository({ members: [[owner, "viewer"]] });
    const made = await createApiToken({ db, owner, input: { name: "old", kind: "personal", role: "viewer", repositoryIds: [repo.id] } });
    expect((await rest(made.token, "GET", "/runs")).status).toBe(200);
    await revokeApiToken({ db, actor: owner, tokenId: made.id });
    const res = await rest(made.token, "GET", "/runs");
    expect(res.status).toBe(401);
    expect((await res.json()).error.message).toMatch(/revoked/);
    expect((await rest(`${made.token}x`, "GET", "/runs")).status).toBe(401);
  });

  it("a viewer-role token of a maintainer cannot approve or cancel; a maintainer token approves", async () => {
    const owner = await createUser();
    const repo = await createPatchRepository([[owner, "maintainer"]]);
    const { approvalId, artifact } = await createPatchApproval({ repo });
    const viewerToken = await tokenFor(owner, [repo.repository.id], "viewer");
    const refused = await rest(viewerToken, "POST", `/approvals/${approvalId}/approve`, { artifactDigest: artifact.digest, headSha: repo.sha });
    expect(refused.status).toBe(403);
    expect((await db.approvalRequest.findUniqueOrThrow({ where: { id: approvalId } })).status).toBe("pending");
    const run = await createRun({ repositoryId: repo.repository.id, status: "queued" });
    expect((await rest(viewerToken, "POST", `/runs/${run.id}/cancel`, {})).status).toBe(403);
    expect((await db.agentDispatchRun.findUniqueOrThrow({ where: { id: run.id } })).status).toBe("queued");

    const maintainerToken = await tokenFor(owner, [repo.repository.id], "maintainer");
    const stale = await rest(maintainerToken, "POST", `/approvals/${approvalId}/approve`, { artifactDigest: "sha256:0000", headSha: repo.sha });
    expect(stale.status).toBe(412);
    expect((await stale.json()).error.reason).toBe("stale");
    expect((await db.approvalRequest.findUniqueOrThrow({ where: { id: approvalId } })).status).toBe("pending");
    const approved = await rest(maintainerToken, "POST", `/approvals/${approvalId}/approve`, { artifactDigest: artifact.digest, headSha: repo.sha });
    expect(approved.status).toBe(200);
    expect((await db.approvalRequest.findUniqueOrThrow({ where: { id: approvalId } })).status).not.toBe("pending");
    const audit = await db.auditEntry.findFirstOrThrow({ where: { objectId: approvalId, action: { startsWith: "approval" } } });
    expect(audit.actor).toContain("(token ci)");
  });

  it("a token never exceeds its owner: asking for more is refused, and a later demotion caps it", async () => {
    const owner = await createUser();
    const repo = await createRepository({ members: [[owner, "viewer"]] });
    await expect(createApiToken({ db, owner, input: { name: "x", kind: "personal", role: "maintainer", repositoryIds: [repo.id] } })).rejects.toThrow(/cannot exceed/);
    await expect(createApiToken({ db, owner, input: { name: "x", kind: "service", role: "viewer", repositoryIds: [repo.id] } })).rejects.toThrow(/admin role/);
    const stranger = await createRepository();
    await expect(createApiToken({ db, owner, input: { name: "x", kind: "personal", role: "viewer", repositoryIds: [stranger.id] } })).rejects.toThrow(/not a member/);

    await db.membership.update({ where: { userId_repositoryId: { userId: owner.id, repositoryId: repo.id } }, data: { role: "maintainer" } });
    const token = await tokenFor(owner, [repo.id], "maintainer");
    const run = await createRun({ repositoryId: repo.id, status: "queued" });
    await db.membership.update({ where: { userId_repositoryId: { userId: owner.id, repositoryId: repo.id } }, data: { role: "viewer" } });
    expect((await rest(token, "POST", `/runs/${run.id}/cancel`, {})).status).toBe(403);
  });

  it("a token is not a session, and a session is not a token", async () => {
    const owner = await createUser();
    const repo = await createRepository({ members: [[owner, "maintainer"]] });
    const run = await createRun({ repositoryId: repo.id, status: "queued" });
    const token = await tokenFor(owner, [repo.id], "maintainer");
    const viaTrpc = await trpcPost(
      new Request(`${origin}/api/trpc/runs.cancel`, {
        method: "POST",
        headers: { host: "localhost:3000", "content-type": "application/json", origin, authorization: `Bearer ${token}` },
        body: JSON.stringify({ json: { runId: run.id } }),
      }),
    );
    expect(viaTrpc.status).toBe(401);
    const cookie = await cookieFor(owner);
    const viaCookie = await rest(null, "POST", `/runs/${run.id}/cancel`, {}, { cookie, origin });
    expect(viaCookie.status).toBe(401);
    expect((await db.agentDispatchRun.findUniqueOrThrow({ where: { id: run.id } })).status).toBe("queued");
    // Nor can a token manage tokens.
    const principal = (await (await rest(token, "GET", "/whoami")).json()) as { token: { id: string } };
    expect(principal.token.id).toBeTruthy();
  });

  it("audits every use, refused ones too, and shows the last use", async () => {
    const owner = await createUser();
    const repo = await createRepository({ members: [[owner, "viewer"]] });
    const made = await createApiToken({ db, owner, input: { name: "bot", kind: "personal", role: "viewer", repositoryIds: [repo.id] } });
    await rest(made.token, "GET", "/runs");
    await rest(made.token, "GET", "/runs/nope");
    const uses = await db.auditEntry.findMany({ where: { objectId: made.id, action: "api_token.use" }, orderBy: { createdAt: "asc" } });
    expect(uses.map((u) => (u.detail as { status: number }).status)).toEqual([200, 404]);
    const [listed] = await callerFor(owner).apiTokens.list();
    expect(listed!.lastUsedAt).toBeInstanceOf(Date);
    expect(JSON.stringify(listed)).not.toContain(made.token);
    expect(JSON.stringify(listed)).not.toContain("tokenHash");
  });
});

describe("REST input and export", () => {
  it("bad input is a 400 naming the field and changes nothing", async () => {
    const owner = await createUser();
    const repo = await createRepository({ members: [[owner, "viewer"]] });
    const token = await tokenFor(owner, [repo.id]);
    const res = await rest(token, "GET", "/runs?limit=1000");
    expect(res.status).toBe(400);
    expect((await res.json()).error.fieldErrors).toHaveProperty("limit");
    expect((await rest(token, "POST", "/runs/x/cancel", undefined, { "content-type": "application/json" })).status).toBe(404);
    expect((await rest(token, "DELETE", "/runs")).status).toBe(405);
  });

  it("the JSONL export parses back into exactly the run's events", async () => {
    const owner = await createUser();
    const repo = await createRepository({ members: [[owner, "viewer"]] });
    const run = await createRun({ repositoryId: repo.id, status: "running" });
    const events = Array.from({ length: 1205 }, (_, i) =>
      i % 3 === 0
        ? { type: "message" as const, payload: { role: "assistant" as const, text: `line ${i}\n\`\`\`nested fence\`\`\` é 🙂` } }
        : { type: "log" as const, payload: { stream: "stdout" as const, text: `out ${i}` } },
    );
    await appendRunEvents({ db, runId: run.id, events });
    const token = await tokenFor(owner, [repo.id]);
    const res = await rest(token, "GET", `/runs/${run.id}/transcript.jsonl`);
    expect(res.headers.get("content-type")).toBe("application/x-ndjson");
    const lines = (await res.text()).trimEnd().split("\n").map((l) => JSON.parse(l));
    const stored = await db.runEvent.findMany({ where: { runId: run.id }, orderBy: { seq: "asc" } });
    expect(lines).toEqual(stored.map((e) => ({ seq: e.seq, type: e.type, attemptId: e.attemptId, createdAt: e.createdAt.toISOString(), payload: e.payload })));

    const md = await (await rest(token, "GET", `/runs/${run.id}/transcript.md`)).text();
    expect(md).toContain(`# Run #${run.number}`);
    expect(md).toContain("````markdown\nline 0\n```nested fence``` é 🙂\n````");
  });
});

describe("the console's export and raw view", () => {
  it("takes the session cookie, not a token, and shows the raw JSON lines as text", async () => {
    const owner = await createUser();
    const repo = await createRepository({ members: [[owner, "viewer"]] });
    const run = await createRun({ repositoryId: repo.id, status: "running" });
    await appendRunEvents({ db, runId: run.id, events: [{ type: "log", payload: { stream: "stdout", text: "<script>alert(1)</script>" } }] });
    const get = (headers: Record<string, string>, query = "format=jsonl") =>
      consoleExport(new Request(`${origin}/api/runs/${run.id}/transcript?${query}`, { headers }), { params: Promise.resolve({ runId: run.id }) });
    const raw = await get({ cookie: await cookieFor(owner) });
    expect(raw.status).toBe(200);
    expect(raw.headers.get("content-type")).toBe("text/plain; charset=utf-8");
    expect(raw.headers.get("content-security-policy")).toContain("sandbox");
    expect(JSON.parse((await raw.text()).trim()).payload.text).toBe("<script>alert(1)</script>");
    const md = await get({ cookie: await cookieFor(owner) }, "format=md&download=1");
    expect(md.headers.get("content-disposition")).toBe(`attachment; filename="run-${run.number}.md"`);
    expect((await get({ authorization: `Bearer ${await tokenFor(owner, [repo.id])}` })).status).toBe(401);
    const stranger = await createUser();
    expect((await get({ cookie: await cookieFor(stranger) })).status).toBe(403);
  });
});

describe("OpenAPI document", () => {
  it("deliveries: a token sees only its repositories' deliveries, and re-evaluating is refused to a non-admin", async () => {
    const owner = await createUser();
    const [a, b] = [await createRepository({ members: [[owner, "admin"]] }), await createRepository({ members: [[owner, "admin"]] })];
    const delivery = (repo: { id: string; fullName: string }) =>
      db.webhookDelivery.create({ data: { deliveryId: `d-${repo.id}`, source: "github", event: "check_run", action: "completed", payload: { repository: { full_name: repo.fullName } }, outcome: "ignored", detail: "no rule matched" } });
    const [ownDelivery] = [await delivery(a), await delivery(b)];
    const token = await tokenFor(owner, [a.id], "admin");
    const list = (await (await rest(token, "GET", "/deliveries?limit=10")).json()) as { items: { deliveryId: string }[] };
    expect(list.items.map((d) => d.deliveryId)).toEqual([ownDelivery.deliveryId]);
    // A repository admin's token is not an Airlock admin: re-evaluation stays with the console's admins.
    const refused = await rest(token, "POST", `/deliveries/${ownDelivery.deliveryId}/reevaluate`, {});
    expect(refused.status).toBe(403);
    expect(await db.webhookDelivery.findUniqueOrThrow({ where: { id: ownDelivery.id }, select: { reevaluations: true } })).toEqual({ reevaluations: 0 });
  });

  it("every documented path answers through the handler (no 404/405/500)", async () => {
    const owner = await createUser();
    const repo = await createRepository({ members: [[owner, "viewer"]] });
    const token = await tokenFor(owner, [repo.id]);
    const doc = openApiDocument(origin);
    const checked: string[] = [];
    for (const [path, methods] of Object.entries(doc.paths)) {
      for (const method of Object.keys(methods)) {
        const concrete = path.replace(/\{\w+\}/g, "missing-id");
        const res = await rest(token, method.toUpperCase(), concrete, method === "get" ? undefined : {});
        // A made-up id is a 404 or a 400/403 from the procedure, never "no such endpoint".
        const body = res.headers.get("content-type")?.includes("json") ? await res.json() : null;
        expect(res.status, `${method} ${path}`).toBeLessThan(500);
        expect(body?.error?.message ?? "", `${method} ${path}`).not.toMatch(/No such endpoint/);
        expect(res.status, `${method} ${path}`).not.toBe(405);
        checked.push(`${method} ${path}`);
      }
    }
    expect(checked.length).toBeGreaterThanOrEqual(20);
  });
});
