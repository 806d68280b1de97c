// A recorded delivery as evaluation sees it: the repository it is about, the normalised event
// (GitHub payloads mapped again with the repository's bot handle; local deliveries as recorded),
// the Airlock user behind a person's request, and Airlock's facts. Reads only. The live path
// (evaluate.ts), the trigger dry run and the stack preview all load through here, so what they
// match is the same by construction.
import type { Db, Repository } from "@/server/db";
import type { DispatchableEvent } from "@/server/domain/ci-events/ci-event";
import type { LocalExtras } from "@/server/domain/ingest/delivery/local-payload";
import { repositoryNameOf, resolveDelivery, type StoredDelivery } from "@/server/domain/ingest/stored-delivery";
import { isAppError } from "@/server/errors";
import { loadFacts, resolveAirlockActor, resolveAirlockUser, type Facts } from "./facts";

export type RecordedEventRef = { kind: "delivery"; deliveryId: string } | { kind: "job"; jobId: string };

export type Described = { ref: RecordedEventRef; label: string; at: Date };

export type LoadedEvent = Described & {
  ok: true;
  repository: Repository;
  event: DispatchableEvent;
  extras: LocalExtras;
  /** The delivery id a run records (a job row has none: "job:<id>"). */
  deliveryId: string;
  eventName: string;
  facts: Facts;
  /** The Airlock user who asked (comments, labels, manual requests), when known. */
  actorUserId: string | null;
};

export type UnusableEvent = Described & {
  ok: false;
  repositoryName: string | null;
  /** What the live path records: "ignored" (nothing to do), "failed" (it can never evaluate). */
  outcome: "ignored" | "failed";
  problem: string;
};

export type DeliveryRow = StoredDelivery & { deliveryId: string; action: string | null; receivedAt: Date };

export async function findRepository(db: Db, fullName: string): Promise<Repository | null> {
  // GitHub owner and repository names are case-insensitive.
  return (
    (await db.repository.findUnique({ where: { fullName } })) ??
    (await db.repository.findFirst({ where: { fullName: { equals: fullName, mode: "insensitive" } } }))
  );
}

const describe = (d: DeliveryRow): Described => ({
  ref: { kind: "delivery", deliveryId: d.deliveryId },
  label: `${d.source} ${d.event}${d.action ? `.${d.action}` : ""} ${d.deliveryId}`,
  at: d.receivedAt,
});

/** Only a person's request is decided by who asked (a failed check or a release is not). */
const asks = (event: DispatchableEvent) => event.type === "pr_comment" || event.type === "pr_labeled" || event.type === "manual";

/** A delivery worth evaluating, before Airlock's facts are read: what the prefilter decides on. */
export type ScreenedEvent = Omit<LoadedEvent, "facts">;

/**
 * The cheap part of loading: the repository, the normalised event and who asked, or why the
 * delivery can never dispatch (unregistered or disabled repository, an event Airlock ignores, a
 * malformed payload). No facts are read.
 */
export async function screenDelivery(
  db: Db,
  delivery: DeliveryRow,
  /** How the repository is found (the live path passes its cached lookup, config-cache.ts). */
  lookUp: (fullName: string) => Promise<Repository | null> = (fullName) => findRepository(db, fullName),
): Promise<ScreenedEvent | UnusableEvent> {
  const described = describe(delivery);
  const name = repositoryNameOf(delivery);
  const repository = name ? await lookUp(name) : null;
  if (!repository) {
    return { ...described, ok: false, repositoryName: name, outcome: "ignored", problem: `repository ${name ?? "(none)"} is not registered in Airlock` };
  }
  if (repository.disabledAt) {
    return { ...described, ok: false, repositoryName: repository.fullName, outcome: "ignored", problem: `repository ${repository.fullName} is disabled: ${repository.disabledReason ?? "by an admin"}` };
  }
  return unusableOnClientError(described, repository, async (): Promise<ScreenedEvent | UnusableEvent> => {
    const resolved = resolveDelivery(delivery, repository.botHandle);
    let event = resolved.event;
    if (event.type === "ignored") return { ...described, ok: false, repositoryName: repository.fullName, outcome: "ignored", problem: event.reason };
    const actor =
      event.type === "manual" && event.userId
        ? await resolveAirlockUser(db, repository.id, event.userId)
        : asks(event)
          ? await resolveAirlockActor(db, repository.id, resolved.githubUserId)
          : null;
    // A manual request's role is the one its user holds now, whatever the event recorded.
    if (event.type === "manual" && event.userId) event = { ...event, actor: { ...event.actor, airlockRole: actor?.role ?? null } };
    else if (actor?.role) event = { ...event, actor: { ...event.actor, airlockRole: actor.role } };
    return {
      ...described,
      ok: true,
      repository,
      event,
      extras: resolved.extras,
      deliveryId: delivery.deliveryId,
      eventName: delivery.event,
      actorUserId: actor?.userId ?? null,
    };
  });
}

/** A screened delivery with Airlock's facts: what the live path, the dry run and the stack preview plan with. */
export async function loadDelivery(db: Db, delivery: DeliveryRow): Promise<LoadedEvent | UnusableEvent> {
  const screened = await screenDelivery(db, delivery);
  return screened.ok ? withFacts(db, screened) : screened;
}

export async function withFacts(db: Db, screened: ScreenedEvent): Promise<LoadedEvent | UnusableEvent> {
  const { repository } = screened;
  return unusableOnClientError(screened, repository, async () => ({
    ...screened,
    facts: await loadFacts({ db, repository, event: screened.event, extras: screened.extras }),
  }));
}

async function unusableOnClientError<T>(described: Described, repository: Repository, fn: () => Promise<T>): Promise<T | UnusableEvent> {
  try {
    return await fn();
  } catch (err) {
    // A delivery that can never evaluate (malformed, invalid stored event); anything else
    // (database down) is thrown so the job is retried.
    if (!isAppError(err) || err.status >= 500) throw err;
    return { ref: described.ref, label: described.label, at: described.at, ok: false, repositoryName: repository.fullName, outcome: "failed", problem: err.message };
  }
}
