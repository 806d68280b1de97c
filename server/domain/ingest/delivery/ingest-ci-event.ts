// The local forge and local CI enter the same path as GitHub: the event is recorded as a
// delivery (source "local") with its "delivery.evaluate" job in one statement, and evaluated by
// the worker exactly like a webhook. Demo and tests need no GitHub.
import { randomUUID } from "node:crypto";
import type { Db } from "@/server/db";
import { AppError } from "@/server/errors";
import { zCiEvent, type CiEvent } from "@/server/domain/ci-events/ci-event";
import { loadKnownSecrets } from "../known-secrets";
import { formatIssues, issuesToText } from "@/server/lib/zod-issues";
import { boundLog, zLocalArtifact, type LocalArtifact, type LocalDeliveryPayload } from "./local-payload";
import { prismaSql } from "@/server/db/sql";
import { DELIVERY_ID, boundedDetail, recordDelivery, sanitizePayload } from "./store";

export type IngestCiEventInput = {
  db: Db;
  event: CiEvent;
  source?: "local";
  /** The forge's id for this event; a repeat of an id is a no-op. Default: a new id. */
  deliveryId?: string;
  /** The failed job's full log (redacted before it is stored). */
  log?: string | null;
  changedFiles?: string[] | null;
  artifacts?: LocalArtifact[];
  /** The forge's raw payload, stored for reference. */
  payload?: unknown;
  now?: Date;
};

export type IngestResult = { status: "accepted" | "ignored" | "duplicate"; deliveryId: string };

export async function ingestCiEvent(input: IngestCiEventInput): Promise<IngestResult> {
  const deliveryId = input.deliveryId ?? `local-${randomUUID()}`;
  if (!DELIVERY_ID.test(deliveryId)) {
    throw new AppError("BAD_REQUEST", `invalid delivery id ${JSON.stringify(deliveryId.slice(0, 80))}`, { reason: "invalid_delivery_id" });
  }
  const parsed = zCiEvent.safeParse(input.event);
  if (!parsed.success) {
    const issues = formatIssues(parsed.error.issues);
    throw new AppError("BAD_REQUEST", `invalid CI event: ${issuesToText(issues)}`, { reason: "invalid_ci_event", details: { issues } });
  }
  const event = parsed.data;
  const artifacts = (input.artifacts ?? []).map((a) => zLocalArtifact.parse(a));
  const now = input.now ?? new Date();
  const secrets = await loadKnownSecrets(input.db, now);
  const payload: LocalDeliveryPayload = {
    ciEvent: event,
    log: boundLog(input.log),
    changedFiles: input.changedFiles ?? null,
    artifacts,
    ...(input.payload === undefined ? {} : { raw: input.payload }),
  };
  const ignored = event.type === "ignored";
  const result = await recordDelivery(prismaSql(input.db), {
    deliveryId,
    source: "local",
    event: event.type === "ignored" ? event.eventName : event.type,
    action: actionOf(event),
    payload: sanitizePayload(payload, secrets),
    outcome: ignored ? "ignored" : "received",
    detail: ignored ? boundedDetail(sanitizePayload(event.reason, secrets)) : null,
    receivedAt: now,
  });
  return { status: !result.recorded ? "duplicate" : ignored ? "ignored" : "accepted", deliveryId };
}

function actionOf(event: CiEvent): string | null {
  switch (event.type) {
    case "failed_check":
    case "release":
      return event.via;
    case "pr_updated":
      return event.action;
    case "pr_comment":
      return event.command;
    case "ignored":
      return event.action;
    default:
      return null;
  }
}
