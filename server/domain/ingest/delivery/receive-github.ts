// POST /api/webhooks/github: verify, record, enqueue, acknowledge. Nothing here waits for
// evaluation, so GitHub gets its answer well inside its 10-second budget.
//
//   401  missing or wrong X-Hub-Signature-256 (nothing stored)
//   413  body over the limit (nothing read past it, nothing stored)
//   400  missing headers, malformed JSON, or a handled event whose payload fails validation
//        (the fields are named; the delivery is recorded as rejected)
//   A signed payload PostgreSQL could not store as sent (a NUL or an unpaired surrogate in a
//   string or key, nesting deeper than 64 levels) is stored bounded, never refused: the signature
//   proves GitHub sent it, GitHub does not redeliver a 400 by itself, and the fields Airlock acts on
//   sit near the top. What was replaced or cut carries a visible marker, and the delivery's detail
//   says the payload was bounded.
//   503  no webhook secret configured (fail closed)
//   202  accepted (evaluation queued) or ignored (recorded, nothing to evaluate)
//   200  duplicate: this delivery id was recorded before; nothing happens twice
import { isAppError } from "@/server/errors";
import { fromGithub } from "../from-github";
import { loadKnownSecrets } from "../known-secrets";
import { readBodyLimited } from "../read-body";
import { verifySignature } from "../signature";
import type { Sql } from "@/server/db/sql";
import { boundJson } from "@/server/lib/text-boundary";
import { DELIVERY_ID, boundedDetail, deliveryPayloadLimits, recordDelivery, sanitizePayload, type DeliveryRecord, type RecordResult } from "./store";

export type ReceiveGithubOptions = {
  /** The webhook route passes its pg pool; tests may pass prismaSql(db). */
  sql: Sql;
  /** How a delivery is written (the route: its group-commit batcher); default one statement on `sql`. */
  record?: (record: DeliveryRecord) => Promise<RecordResult>;
  request: Request;
  /** GITHUB_WEBHOOK_SECRET; with no app secret either, every delivery is refused. */
  secret: string | undefined;
  /** The configured GitHub App's webhook secret (a delivery signed with either is accepted). */
  appSecret?: string | null;
  maxBytes: number;
  now?: Date;
};

const json = (status: number, body: Record<string, unknown>) =>
  Response.json(body, { status, headers: { "Cache-Control": "no-store" } });

export async function receiveGithubWebhook(opts: ReceiveGithubOptions): Promise<Response> {
  const { request, sql } = opts;
  const record = opts.record ?? ((r: DeliveryRecord) => recordDelivery(sql, r));
  const secrets = [opts.secret, opts.appSecret].filter((s): s is string => Boolean(s));
  if (secrets.length === 0) {
    return json(503, { error: "webhook secret not configured: set up the GitHub App (Settings → GitHub) or set GITHUB_WEBHOOK_SECRET" });
  }
  const body = await readBodyLimited(request, opts.maxBytes);
  if (!body.ok) return json(413, { error: `payload larger than ${body.limit} bytes (WEBHOOK_MAX_BYTES)` });

  const header = request.headers.get("x-hub-signature-256");
  const checks = secrets.map((s) => verifySignature(s, body.bytes, header));
  const signature = checks.find((c) => c.ok) ?? (checks[0] as (typeof checks)[number]);
  if (!signature.ok) return json(401, { error: signature.reason });

  const eventName = request.headers.get("x-github-event")?.trim() ?? "";
  const deliveryId = request.headers.get("x-github-delivery")?.trim() ?? "";
  if (!/^[a-z_]{1,100}$/.test(eventName)) return json(400, { error: "missing or malformed X-GitHub-Event" });
  if (!DELIVERY_ID.test(deliveryId)) return json(400, { error: "missing or malformed X-GitHub-Delivery" });

  const parsed = parseBody(body.bytes, request.headers.get("content-type"));
  if (!parsed.ok) return json(400, { error: parsed.error });
  // The text boundary before anything walks the payload (mapping, redaction, the insert).
  const bounded = boundJson(parsed.value, deliveryPayloadLimits);
  const payload = bounded.value;
  const boundNote = bounded.changed ? "payload stored bounded: NUL, unpaired surrogates or nesting past 64 levels replaced with markers" : null;
  const action = typeof (payload as { action?: unknown }).action === "string" ? (payload as { action: string }).action : null;

  const now = opts.now ?? new Date();
  const known = await loadKnownSecrets(sql, now);
  const base = { deliveryId, source: "github" as const, event: eventName, action, receivedAt: now };

  let mapped: ReturnType<typeof fromGithub>;
  try {
    // Validates the payload now, so a malformed one is refused while GitHub is listening. The
    // evaluation maps it again with the repository's own bot handle.
    mapped = fromGithub(eventName, payload);
  } catch (err) {
    if (!isAppError(err) || err.code !== "UNPROCESSABLE") throw err;
    const detail = boundedDetail([sanitizePayload(err.message, known), boundNote].filter(Boolean).join("; "));
    await record({ ...base, payload: sanitizePayload(payload, known), outcome: "rejected", detail });
    return json(400, { error: err.message, issues: err.details?.issues ?? [] });
  }

  // Ignored events are recorded and final. Comments are the exception: whether one addresses
  // the bot depends on the repository's handle, which only the evaluation knows; and so are the
  // GitHub App's installation events, which the worker applies (github-app/installations.ts).
  // A click on Airlock's own check run (check_run.requested_action) too: use-cases/requested-action.ts.
  const ignored = mapped.type === "ignored" && !WORKER_DECIDES.has(eventName) && !(eventName === "check_run" && action === "requested_action");
  const result = await record({
    ...base,
    payload: sanitizePayload(payload, known),
    outcome: ignored ? "ignored" : "received",
    detail: mapped.type === "ignored" && ignored ? boundedDetail([sanitizePayload(mapped.reason, known), boundNote].filter(Boolean).join("; ")) : boundNote,
  });
  if (!result.recorded) return json(200, { status: "duplicate", deliveryId });
  if (ignored) return json(202, { status: "ignored", deliveryId, reason: mapped.type === "ignored" ? mapped.reason : "" });
  return json(202, { status: "accepted", deliveryId, event: eventName });
}

const WORKER_DECIDES = new Set(["issue_comment", "installation", "installation_repositories"]);

type Parsed = { ok: true; value: object } | { ok: false; error: string };

/** GitHub sends application/json, or a form with the JSON in `payload` (both are signed raw). */
function parseBody(bytes: Uint8Array, contentType: string | null): Parsed {
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    return { ok: false, error: "body is not valid UTF-8" };
  }
  if ((contentType ?? "").toLowerCase().startsWith("application/x-www-form-urlencoded")) {
    const form = new URLSearchParams(text).get("payload");
    if (form === null) return { ok: false, error: "form body without a payload field" };
    text = form;
  }
  try {
    const value: unknown = JSON.parse(text);
    if (value === null || typeof value !== "object" || Array.isArray(value)) {
      return { ok: false, error: "payload must be a JSON object" };
    }
    return { ok: true, value };
  } catch (err) {
    return { ok: false, error: `payload is not valid JSON: ${err instanceof Error ? err.message : String(err)}` };
  }
}
