// A stored delivery back to its normalised event: GitHub payloads are mapped again (now with the
// repository's own bot handle), local deliveries carry the event itself.
import type { ForgeKind } from "@/server/db/generated/enums";
import { AppError } from "@/server/errors";
import type { CiEvent } from "@/server/domain/ci-events/ci-event";
import { zLocalDeliveryPayload, type LocalExtras } from "./delivery/local-payload";
import { fromGithub } from "./from-github";
import { formatIssues, issuesToText } from "@/server/lib/zod-issues";

export type StoredDelivery = { source: ForgeKind; event: string; payload: unknown };

export type ResolvedDelivery = {
  event: CiEvent;
  extras: LocalExtras;
  /** The GitHub user id of whoever asked (commenter, reviewer, sender): links to an Airlock user. */
  githubUserId: number | null;
};

const NO_EXTRAS: LocalExtras = { log: null, changedFiles: null, artifacts: [] };

const record = (v: unknown): Record<string, unknown> =>
  v !== null && typeof v === "object" && !Array.isArray(v) ? (v as Record<string, unknown>) : {};

/** The repository a stored delivery is about, read without trusting the payload's shape. */
export function repositoryNameOf(delivery: StoredDelivery): string | null {
  const payload = record(delivery.payload);
  const name =
    delivery.source === "local"
      ? (record(record(payload.ciEvent).repository).fullName ?? record(payload.ciEvent).repositoryFullName)
      : record(payload.repository).full_name;
  return typeof name === "string" && name !== "" ? name : null;
}

export function resolveDelivery(delivery: StoredDelivery, botHandle: string): ResolvedDelivery {
  if (delivery.source === "local") {
    const parsed = zLocalDeliveryPayload.safeParse(delivery.payload);
    if (!parsed.success) {
      throw new AppError("UNPROCESSABLE", `invalid local delivery: ${issuesToText(formatIssues(parsed.error.issues))}`, {
        reason: "invalid_local_delivery",
      });
    }
    const { ciEvent, log, changedFiles, artifacts } = parsed.data;
    return { event: ciEvent, extras: { log, changedFiles, artifacts }, githubUserId: null };
  }
  const event = fromGithub(delivery.event, delivery.payload, { botHandle });
  return { event, extras: NO_EXTRAS, githubUserId: githubUserIdOf(delivery.event, delivery.payload) };
}

function githubUserIdOf(eventName: string, payload: unknown): number | null {
  const p = record(payload);
  const user =
    eventName === "issue_comment"
      ? record(record(p.comment).user)
      : eventName === "pull_request_review"
        ? record(record(p.review).user)
        : record(p.sender);
  return typeof user.id === "number" ? user.id : null;
}
