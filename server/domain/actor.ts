import type { SessionUser } from "@/server/auth/roles";
import type { RepoRole } from "@/server/db";
import type { AuditActor } from "./audit";

// Who does something in Airlock: the one actor type every area takes (issue #16).
//  - A person, signed in: a `UserActor` without `apiToken`. Their roles are per repository
//    (server/auth/roles.ts `repositoryRole`); an Airlock admin is admin everywhere.
//  - An API token acting for its owner: a `UserActor` with `apiToken` set. A token is never an
//    Airlock admin, and its scope caps the owner's roles.
//  - Airlock itself (the worker, the change gate, the fix loop, the demo bootstrap, a forge
//    webhook's sender): a `SystemActor`, no user, named by its label.
// `auditActorOf` is the one conversion to what an audit entry records. Where a check needs the
// actor's role on one repository (admission, a PR comment asking for a run), `RepositoryActor`
// carries it. Who acted on the forge (a GitHub login) is `ForgeActor` in ci-events/ci-event.ts.

export type UserActor = Pick<SessionUser, "id" | "email" | "isAdmin" | "apiToken">;
export type SystemActor = { userId: null; label: string };
export type Actor = UserActor | SystemActor;

export const systemActor = (label: string): SystemActor => ({ userId: null, label });

/** What an audit entry records of an actor: the user (if any) and a label a reader knows them by. */
export const auditActorOf = (actor: Actor): AuditActor => ("id" in actor ? { userId: actor.id, label: actor.email } : { userId: null, label: actor.label });

/** An actor as one repository's checks see it: a person with their role there, or an automation under a trigger rule. */
export type RepositoryActor = PersonOnRepository | { kind: "automation"; label: string; triggerRuleId: string | null };
export type PersonOnRepository = { kind: "person"; userId: string | null; label: string; role: RepoRole | null };
