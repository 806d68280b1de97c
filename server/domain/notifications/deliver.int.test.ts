import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { getDb } from "@/server/db";
import { runPendingJobs } from "@/server/domain/ingest/fixtures/run-once";
import { verifySignature } from "@/server/domain/ingest/signature";
import { deliverNotificationTask } from "@/server/queue/tasks/deliver-notification";
import { createRepository } from "@/server/testing/factories";
import { deliveryJobKey } from "./config";
import { deliverNotification, type NotificationWebhookPayload } from "./deliver";
import { notify } from "./notify";

// A real HTTP receiver on a loopback port, and graphile-worker running the real task: retries
// are the queue's own (its backoff skipped by moving run_at), not a loop in the test.

const db = () => getDb();
const SECRET = "notify-test-secret-0123456789";
const ORIGIN = "https://airlock.example.test";

type Received = { headers: IncomingHttpHeaders; raw: Buffer };
const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => new Promise((r) => s.close(r))));
});

/** A receiver answering each request with the next status of `statuses` (the last one repeats). */
async function receiver(statuses: number[]) {
  const received: Received[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      received.push({ headers: req.headers, raw: Buffer.concat(chunks) });
      res.statusCode = statuses[Math.min(received.length - 1, statuses.length - 1)]!;
      res.end(res.statusCode >= 400 ? "<html>receiver error page</html>" : "ok");
    });
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const { port } = server.address() as AddressInfo;
  return { received, url: `http://127.0.0.1:${port}/hooks/airlock?token=url-token-never-logged` };
}

async function notification(url: string, secret: string | null = SECRET) {
  const repo = await createRepository();
  const { id } = await notify(
    db(),
    {
      kind: "triage_escalated",
      repositoryId: repo.id,
      title: "Triage needs a person",
      body: "No rule matched this failure.",
      href: "/runs/run-1",
      runId: "run-1",
      pullRequestId: "pr-1",
      dedupeKey: `deliver:${repo.id}`,
    },
    { webhook: { url, secret } },
  );
  return { id, repo };
}

function worker(url: string, secret: string | null = SECRET) {
  const lines: string[] = [];
  const handlers = {
    "notification.deliver": (payload: unknown) =>
      deliverNotificationTask(payload, { db: db(), log: (l) => lines.push(l) }, { webhook: { url, secret }, origin: ORIGIN }),
  };
  return {
    lines,
    /** One pass of the worker over due jobs, then the retry backoff skipped. */
    async pass() {
      await runPendingJobs(handlers);
      await db().$executeRaw`UPDATE graphile_worker._private_jobs SET run_at = now() WHERE key LIKE 'notification.deliver:%'`;
    },
  };
}

const jobsLeft = async (id: string) =>
  (await db().$queryRaw<{ n: number }[]>`SELECT count(*)::int AS n FROM graphile_worker._private_jobs WHERE key = ${deliveryJobKey(id)}`)[0]!.n;
const row = (id: string) => db().notification.findUniqueOrThrow({ where: { id } });

describe("notification.deliver", () => {
  it("POSTs a signed JSON payload with an absolute link, and marks it delivered", async () => {
    const hook = await receiver([204]);
    const { id, repo } = await notification(hook.url);
    const w = worker(hook.url);
    await w.pass();

    expect(hook.received).toHaveLength(1);
    const [req] = hook.received;
    expect(verifySignature(SECRET, req!.raw, req!.headers["x-airlock-signature-256"] as string)).toEqual({ ok: true });
    expect(verifySignature("another-secret-0123456789", req!.raw, req!.headers["x-airlock-signature-256"] as string).ok).toBe(false);
    expect(req!.headers["x-airlock-delivery"]).toBe(id);
    expect(req!.headers["content-type"]).toBe("application/json");
    const body = JSON.parse(req!.raw.toString()) as NotificationWebhookPayload;
    expect(body).toMatchObject({
      id,
      kind: "triage_escalated",
      title: "Triage needs a person",
      href: `${ORIGIN}/runs/run-1`,
      repository: { id: repo.id, fullName: repo.fullName },
      runId: "run-1",
      pullRequestId: "pr-1",
    });
    expect(req!.raw.toString()).not.toContain(SECRET);
    expect(await row(id)).toMatchObject({ deliveryStatus: "delivered", deliveryAttempts: 1, deliveryError: null, deliveredAt: expect.any(Date) });
    expect(await jobsLeft(id)).toBe(0);
  });

  it("a 500 is retried by the queue; the second attempt delivers, with the same delivery id", async () => {
    const hook = await receiver([500, 200]);
    const { id } = await notification(hook.url);
    const w = worker(hook.url);
    await w.pass();
    expect(await row(id)).toMatchObject({ deliveryStatus: "pending", deliveryAttempts: 1, deliveryError: "HTTP 500 Internal Server Error" });
    expect(await jobsLeft(id)).toBe(1);
    await w.pass();
    expect(hook.received.map((r) => r.headers["x-airlock-delivery"])).toEqual([id, id]);
    expect(await row(id)).toMatchObject({ deliveryStatus: "delivered", deliveryAttempts: 2, deliveryError: null });
    expect(await jobsLeft(id)).toBe(0);
  });

  it("a receiver that keeps failing is tried 3 times, then marked failed and logged as an error", async () => {
    const hook = await receiver([503]);
    const { id } = await notification(hook.url);
    const w = worker(hook.url);
    for (let i = 0; i < 5; i++) await w.pass();
    expect(hook.received).toHaveLength(3);
    expect(await row(id)).toMatchObject({ deliveryStatus: "failed", deliveryAttempts: 3, deliveryError: "HTTP 503 Service Unavailable" });
    expect(await jobsLeft(id)).toBe(0);
    expect(w.lines.filter((l) => l.startsWith("error:"))).toEqual([
      `error: notification ${id}: webhook failed after 3 attempts (HTTP 503 Service Unavailable); giving up`,
    ]);
    // The receiver's page and the URL (with its token) are never recorded.
    expect(JSON.stringify(await row(id))).not.toMatch(/receiver error page|url-token/);
  });

  it("nothing is delivered twice: the job run again after a success sends nothing", async () => {
    const hook = await receiver([200]);
    const { id } = await notification(hook.url, null);
    const w = worker(hook.url, null);
    await w.pass();
    expect(hook.received[0]!.headers["x-airlock-signature-256"]).toBeUndefined();
    // A redelivered job (a worker died after the 2xx was recorded) and a direct second call.
    await db().$executeRaw`SELECT graphile_worker.add_job('notification.deliver', json_build_object('notificationId', ${id}::text), max_attempts => 3)`;
    await w.pass();
    const again = await deliverNotification({ db: db(), notificationId: id, webhook: { url: hook.url, secret: null }, origin: ORIGIN });
    expect(again.outcome).toBe("skipped");
    expect(hook.received).toHaveLength(1);
    expect((await row(id)).deliveryAttempts).toBe(1);
  });

  it("a receiver that is not listening counts as a failed attempt, without quoting the URL", async () => {
    const hook = await receiver([200]);
    await new Promise((r) => servers.pop()!.close(r));
    const { id } = await notification(hook.url);
    const result = await deliverNotification({ db: db(), notificationId: id, webhook: { url: hook.url, secret: SECRET }, origin: ORIGIN });
    expect(result).toEqual({ outcome: "retry", attempts: 1, error: "request failed: ECONNREFUSED" });
    expect((await row(id)).deliveryError).toBe("request failed: ECONNREFUSED");
  });
});
