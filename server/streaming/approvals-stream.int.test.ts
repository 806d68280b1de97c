import { describe, expect, it } from "vitest";
import { getAuth } from "@/server/auth";
import type { SessionUser } from "@/server/auth/roles";
import { getDb } from "@/server/db";
import { approveWriteBack } from "@/server/domain/run-engine/decide-approval";
import { createPatchApproval, createPatchRepository } from "@/server/domain/approvals/test-fixtures";
import { createUser, TEST_PASSWORD } from "@/server/testing/factories";
import { streamHandler } from "@/server/web/streams";
import { defaultHub } from "./responses";
import { type SseEvent, SseParser } from "./sse-parser";

// GET /api/approvals/stream against a real PostgreSQL: a new request and its decision reach a
// queue viewer of the repository, and nothing of a repository the viewer cannot see.

/** A GET through the web server's stream routing, as a browser's request would go. */
const get = (req: Request) => streamHandler("GET", new URL(req.url).pathname)!(req);

async function cookieFor(user: SessionUser) {
  const res = await getAuth().api.signInEmail({ body: { email: user.email, password: TEST_PASSWORD }, asResponse: true });
  return res.headers.getSetCookie().map((c) => c.split(";")[0]).join("; ");
}

async function readUntil(body: ReadableStream<Uint8Array>, events: SseEvent[], pred: () => boolean, timeoutMs: number) {
  const reader = body.getReader();
  const parser = new SseParser();
  const decoder = new TextDecoder();
  const deadline = Date.now() + timeoutMs;
  try {
    while (!pred() && Date.now() < deadline) {
      const next = await Promise.race([reader.read(), new Promise<"timeout">((r) => setTimeout(() => r("timeout"), Math.max(1, deadline - Date.now())))]);
      if (next === "timeout") break;
      if (next.done) break;
      events.push(...parser.push(decoder.decode(next.value, { stream: true })));
    }
  } finally {
    reader.releaseLock();
  }
}

describe("GET /api/approvals/stream (the approvals queue)", () => {
  it("sends new and decided requests of visible repositories only; anonymous is refused", async () => {
    const m = await createUser();
    const mine = await createPatchRepository([[m, "maintainer"]]);
    const hidden = await createPatchRepository([]);
    expect((await get(new Request("http://localhost:3000/api/approvals/stream"))).status).toBe(401);
    const res = await get(new Request("http://localhost:3000/api/approvals/stream", { headers: { cookie: await cookieFor(m) } }));
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/event-stream; charset=utf-8");
    const body = res.body as ReadableStream<Uint8Array>;
    await defaultHub().ready();

    const events: SseEvent[] = [];
    const changes = () => events.filter((e) => e.event === "approval").map((e) => JSON.parse(e.data) as { id: string; status: string; repositoryId: string });
    await createPatchApproval({ repo: hidden });
    const asked = await createPatchApproval({ repo: mine });
    await readUntil(body, events, () => changes().some((c) => c.id === asked.approvalId), 10_000);
    expect(changes()).toContainEqual(expect.objectContaining({ id: asked.approvalId, status: "pending", repositoryId: mine.repository.id }));

    const a = await getDb().approvalRequest.findUniqueOrThrow({ where: { id: asked.approvalId } });
    await approveWriteBack({ db: getDb(), actor: { id: m.id, email: m.email, isAdmin: false }, approvalId: a.id, artifactDigest: a.artifactDigest, headSha: a.targetHeadSha });
    await readUntil(body, events, () => changes().some((c) => c.id === asked.approvalId && c.status === "approved"), 10_000);
    // Anything about the hidden repository would have arrived in the same windows.
    await readUntil(body, events, () => false, 600);
    expect(changes().map((c) => [c.id, c.status])).toEqual([
      [asked.approvalId, "pending"],
      [asked.approvalId, "approved"],
    ]);
    await body.cancel();
  });
});
