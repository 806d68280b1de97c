// Signed deliveries PostgreSQL could not store as sent: an unpaired surrogate, NUL in a key and a
// value, JSON nested 100,000 levels deep. Each is stored bounded (replaced or cut with a visible
// marker) and evaluated, never answered 500 and lost: the signature proves GitHub sent it, and
// GitHub does not redeliver by itself (see receive-github.ts for the decision).
import { beforeAll, describe, expect, it } from "vitest";

process.env.GITHUB_WEBHOOK_SECRET = "webhook-secret-for-hostile-tests";

const { getDb } = await import("@/server/db");
const { createRepository } = await import("@/server/testing/factories");
const { createRule, createStack, sha } = await import("@/server/domain/ingest/fixtures/world");
const { pullRequestEvent } = await import("@/server/domain/ingest/fixtures/deliveries");
const { post, nextDeliveryId } = await import("@/server/domain/evaluation/fixtures/harness");
const { evaluateDelivery } = await import("@/server/domain/evaluation/evaluate");
const { POST } = await import("./route");
const { signBody } = await import("@/server/domain/ingest/signature");

const db = getDb();
let repo: Awaited<ReturnType<typeof createRepository>>;

beforeAll(async () => {
  repo = await createRepository();
  const stack = await createStack(db);
  await createRule(db, { kind: "failed_check", stackId: stack.id, repositoryId: repo.id });
});

/** POST a raw signed body (the JSON text exactly as a hostile sender writes it). */
async function postRaw(event: string, body: string) {
  const deliveryId = nextDeliveryId("hostile");
  const res = await POST(
    new Request("http://localhost/api/webhooks/github", {
      method: "POST",
      headers: { "content-type": "application/json", "x-github-event": event, "x-github-delivery": deliveryId, "x-hub-signature-256": signBody(process.env.GITHUB_WEBHOOK_SECRET!, body) },
      body,
    }),
  );
  return { deliveryId, status: res.status, body: (await res.json()) as Record<string, unknown> };
}

const pr = (number: number, body: string) => pullRequestEvent({ repo: repo.fullName, action: "opened", number, title: `PR ${number}`, body, headRef: `feature/${number}`, headSha: sha(`hostile-${number}`) });

describe("signed deliveries with text PostgreSQL cannot hold", () => {
  it("an unpaired surrogate and NUL (in a value and a key) are stored replaced, evaluated, and the PR row is readable", async () => {
    const json = JSON.stringify({ ...pr(41, "BODYMARK").payload, "key\u0000with-nul": "v" })
      .replace("BODYMARK", "broken emoji \\ud83d and NUL \\u0000 end");
    const posted = await postRaw("pull_request", json);
    expect(posted.status).toBe(202);
    const stored = await db.webhookDelivery.findUniqueOrThrow({ where: { deliveryId: posted.deliveryId } });
    const payload = stored.payload as { pull_request: { body: string } } & Record<string, unknown>;
    expect(payload.pull_request.body).toBe("broken emoji \ufffd and NUL \u2400 end");
    expect(payload["key\u2400with-nul"]).toBe("v");
    expect(stored.detail).toMatch(/payload stored bounded/);
    await evaluateDelivery({ db, deliveryId: posted.deliveryId });
    const row = await db.pullRequest.findUniqueOrThrow({ where: { repositoryId_number: { repositoryId: repo.id, number: 41 } } });
    expect(row.body).toBe("broken emoji \ufffd and NUL \u2400 end");
  });

  it("100,000-deep JSON is stored cut at 64 levels with a marker, not a 500", async () => {
    const deep = `${"[".repeat(100_000)}"bottom"${"]".repeat(100_000)}`;
    const json = JSON.stringify(pr(42, "fine").payload).replace(/}$/, `,"attack":${deep}}`);
    const posted = await postRaw("pull_request", json);
    expect(posted.status).toBe(202);
    const stored = await db.webhookDelivery.findUniqueOrThrow({ where: { deliveryId: posted.deliveryId } });
    const text = JSON.stringify(stored.payload);
    expect(text).toContain("…[cut: nested deeper than 64 levels]");
    expect(text.length).toBeLessThan(json.length);
    expect(await evaluateDelivery({ db, deliveryId: posted.deliveryId })).toMatchObject({ outcome: expect.any(String) });
    expect(await db.pullRequest.count({ where: { repositoryId: repo.id, number: 42 } })).toBe(1);
  });

  it("a well-formed delivery is stored as sent, with no note", async () => {
    const posted = await post(pr(43, "plain body 😀"));
    expect(posted.status).toBe(202);
    const stored = await db.webhookDelivery.findUniqueOrThrow({ where: { deliveryId: posted.deliveryId } });
    expect((stored.payload as { pull_request: { body: string } }).pull_request.body).toBe("plain body 😀");
    expect(stored.detail).toBeNull();
  });
});
