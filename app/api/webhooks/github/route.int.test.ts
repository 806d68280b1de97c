// POST /api/webhooks/github, called in-process with real Requests against a real database.
import { beforeAll, describe, expect, it } from "vitest";

// The route reads its settings from server/env at import: set them first.
const SECRET = "webhook-secret-for-route-tests";
process.env.GITHUB_WEBHOOK_SECRET = SECRET;
process.env.WEBHOOK_MAX_BYTES = String(64 * 1024);

const { POST } = await import("./route");
const { getDb } = await import("@/server/db");
const { createRepository } = await import("@/server/testing/factories");
const { createRule, createStack, sha } = await import("@/server/domain/ingest/fixtures/world");
const { failedWorkflowJob, signedRequest } = await import("@/server/domain/ingest/fixtures/deliveries");
const { signBody } = await import("@/server/domain/ingest/signature");
const { evaluateDeliveryTask } = await import("@/server/queue/tasks/evaluate-delivery");
const { runPendingJobs } = await import("@/server/domain/ingest/fixtures/run-once");

const URL_ = "http://localhost:3000/api/webhooks/github";
const db = getDb();
let repoName = "";

async function counts() {
  const [deliveries, runs, [jobs]] = await Promise.all([
    db.webhookDelivery.count(),
    db.agentDispatchRun.count(),
    db.$queryRaw<{ n: number }[]>`SELECT count(*)::int AS n FROM graphile_worker.jobs WHERE task_identifier = 'delivery.evaluate'`,
  ]);
  return { deliveries, runs, jobs: jobs?.n ?? 0 };
}

const failure = (id: number) =>
  failedWorkflowJob({ repo: repoName, runId: 5000 + id, jobId: 9000 + id, jobName: "test", step: "Run npm test", headSha: sha(`route-${id}`), headBranch: "feature/x" });

async function pendingEvaluationJobs() {
  // The public jobs view hides payloads; the private table holds them.
  // One entry per delivery a job names (batch payloads).
  return db.$queryRaw<{ payload: { deliveryId: string } }[]>`
    SELECT e AS payload FROM graphile_worker._private_jobs j JOIN graphile_worker._private_tasks t ON t.id = j.task_id,
      json_array_elements(j.payload) AS e
    WHERE t.identifier = 'delivery.evaluate' ORDER BY j.id`;
}

beforeAll(async () => {
  const repo = await createRepository({ fullName: `acme/route-${Date.now().toString(36)}` });
  repoName = repo.fullName;
  const stack = await createStack(db);
  await createRule(db, { kind: "failed_check", stackId: stack.id, repositoryId: repo.id });
});

describe("POST /api/webhooks/github: signatures", () => {
  it("accepts a valid signature and stores the delivery with its evaluation job", async () => {
    const before = await counts();
    const request = signedRequest(URL_, SECRET, "sig-valid", failure(1));
    // As a real HTTP request arrives: with its length declared.
    request.headers.set("content-length", String(JSON.stringify(failure(1).payload).length));
    const res = await POST(request);
    expect(res.status).toBe(202);
    expect(await res.json()).toMatchObject({ status: "accepted", deliveryId: "sig-valid" });
    const after = await counts();
    expect(after.deliveries - before.deliveries).toBe(1);
    expect(after.jobs - before.jobs).toBe(1);
    const row = await db.webhookDelivery.findUniqueOrThrow({ where: { deliveryId: "sig-valid" } });
    expect(row).toMatchObject({ source: "github", event: "workflow_job", action: "completed", outcome: "received", processedAt: null });
  });

  const body = JSON.stringify(failure(2).payload);
  const headers = (signature: string | null) => ({
    "content-type": "application/json",
    "x-github-event": "workflow_job",
    "x-github-delivery": `sig-${Math.random().toString(36).slice(2)}`,
    ...(signature === null ? {} : { "x-hub-signature-256": signature }),
  });
  it.each([
    ["a wrong secret", signBody("not-the-secret", body), body],
    ["no signature", null, body],
    ["the sha1 algorithm", `sha1=${signBody(SECRET, body).slice("sha256=".length, "sha256=".length + 40)}`, body],
    ["a sha1-prefixed sha256 digest", signBody(SECRET, body).replace("sha256=", "sha1="), body],
    ["a body altered after signing", signBody(SECRET, body), body.replace('"failure"', '"success"')],
    ["a truncated digest", signBody(SECRET, body).slice(0, 40), body],
  ])("refuses %s with 401 and stores nothing", async (_case, signature, sent) => {
    const before = await counts();
    const res = await POST(new Request(URL_, { method: "POST", headers: headers(signature), body: sent }));
    expect(res.status).toBe(401);
    expect(await counts()).toEqual(before);
  });
});

describe("POST /api/webhooks/github: bad input", () => {
  it("answers 413 for a body over WEBHOOK_MAX_BYTES, by Content-Length or by counting a stream", async () => {
    const before = await counts();
    const big = JSON.stringify({ ...failure(3).payload, padding: "x".repeat(70 * 1024) });
    const declared = signedRequest(URL_, SECRET, "too-big-1", { event: "workflow_job", body: big });
    declared.headers.set("content-length", String(Buffer.byteLength(big)));
    expect((await POST(declared)).status).toBe(413);
    // A chunked upload declares no length: the limit is enforced while reading.
    let sent = 0;
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent > 200 * 1024) return controller.close();
        sent += 16 * 1024;
        controller.enqueue(new TextEncoder().encode("x".repeat(16 * 1024)));
      },
    });
    const chunked = await POST(
      new Request(URL_, {
        method: "POST",
        headers: { "x-github-event": "workflow_job", "x-github-delivery": "too-big-2", "x-hub-signature-256": signBody(SECRET, big) },
        body: stream,
        duplex: "half",
      } as RequestInit & { duplex: "half" }),
    );
    expect(chunked.status).toBe(413);
    expect(sent).toBeLessThan(200 * 1024);
    expect(await counts()).toEqual(before);
  });

  it("answers 400 naming the field for a payload that fails validation, and records it as rejected", async () => {
    const bad = failure(4);
    delete (bad.payload.repository as Record<string, unknown>).full_name;
    const res = await POST(signedRequest(URL_, SECRET, "invalid-payload", bad));
    expect(res.status).toBe(400);
    const json = (await res.json()) as { error: string; issues: { path: string }[] };
    expect(json.error).toContain("repository.full_name: Required");
    expect(json.issues.map((i) => i.path)).toContain("repository.full_name");
    const row = await db.webhookDelivery.findUniqueOrThrow({ where: { deliveryId: "invalid-payload" } });
    expect(row.outcome).toBe("rejected");
    expect(row.detail).toContain("repository.full_name");
  });

  it("answers 400 for a body that is not JSON, storing nothing", async () => {
    const before = await counts();
    const res = await POST(signedRequest(URL_, SECRET, "not-json", { event: "workflow_job", body: "{not json" }));
    expect(res.status).toBe(400);
    expect(await counts()).toEqual(before);
  });

  it("keeps the benchmark's bare route closed unless AIRLOCK_BENCH=1", async () => {
    const noop = await import("@/app/api/bench/noop/route");
    expect((await noop.POST(new Request("http://localhost/api/bench/noop", { method: "POST", body: "{}" }))).status).toBe(404);
  });

  it("records and acknowledges an unknown event with 202, without an evaluation job", async () => {
    const before = await counts();
    const res = await POST(signedRequest(URL_, SECRET, "unknown-event", { event: "star", payload: { action: "created", repository: { full_name: repoName } } }));
    expect(res.status).toBe(202);
    expect(await res.json()).toMatchObject({ status: "ignored", reason: 'event "star" is not handled' });
    const row = await db.webhookDelivery.findUniqueOrThrow({ where: { deliveryId: "unknown-event" } });
    expect(row).toMatchObject({ outcome: "ignored", event: "star", detail: 'event "star" is not handled' });
    expect(row.processedAt).not.toBeNull();
    expect((await counts()).jobs).toBe(before.jobs);
  });
});

describe("POST /api/webhooks/github: redelivery and crashes", () => {
  it("records the same delivery id sent 20 times concurrently once, and evaluates it into at most one run", async () => {
    const delivery = failure(5);
    const before = await counts();
    const responses = await Promise.all(Array.from({ length: 20 }, () => POST(signedRequest(URL_, SECRET, "storm-same-id", delivery))));
    const statuses = responses.map((r) => r.status).sort();
    expect(statuses.filter((s) => s === 202)).toHaveLength(1);
    expect(statuses.filter((s) => s === 200)).toHaveLength(19);
    const bodies = await Promise.all(responses.filter((r) => r.status === 200).map((r) => r.json() as Promise<{ status: string }>));
    expect(bodies.every((b) => b.status === "duplicate")).toBe(true);
    const after = await counts();
    expect(after.deliveries - before.deliveries).toBe(1);
    expect(after.jobs - before.jobs).toBe(1);
    // Even if the job ran 20 times at once (retries, two workers), one run.
    await Promise.all(Array.from({ length: 20 }, () => evaluateDeliveryTask({ deliveryId: "storm-same-id" }, { db })));
    const runs = await db.agentDispatchRun.count({ where: { headSha: sha("route-5") } });
    expect(runs).toBe(1);
  });

  it("loses nothing when the process dies after acknowledging: the stored job creates the run on restart", async () => {
    const res = await POST(signedRequest(URL_, SECRET, "crash-after-ack", failure(6)));
    expect(res.status).toBe(202);
    // "Crash": nothing evaluated it. The delivery and its job are durable.
    expect(await db.agentDispatchRun.count({ where: { headSha: sha("route-6") } })).toBe(0);
    const pending = await pendingEvaluationJobs();
    expect(pending.map((j) => j.payload.deliveryId)).toContain("crash-after-ack");
    // "Restart": a graphile-worker run over the pending jobs with the real task handler.
    await runPendingJobs({ "delivery.evaluate": (payload) => evaluateDeliveryTask(payload, { db }) });
    const run = await db.agentDispatchRun.findFirstOrThrow({ where: { headSha: sha("route-6") } });
    expect(run).toMatchObject({ source: "failed_check", status: "suggested", repositoryId: expect.any(String) });
    expect(await pendingEvaluationJobs()).toEqual([]);
    const delivery = await db.webhookDelivery.findUniqueOrThrow({ where: { deliveryId: "crash-after-ack" } });
    expect(delivery.outcome).toBe("processed");
    expect(delivery.processedAt).not.toBeNull();
  });
});
