// A click on "Diagnose with agent" or "Attempt repair" in the PR's check panel: GitHub sends
// `check_run` with action `requested_action` to the app that created the check run. A signed
// delivery proves GitHub sent it, not that it is ours to act on, so before anything dispatches:
// the check run must be Airlock's app's, of the installation that covers the repository, one of
// Airlock's own check runs (its surface row, with the run id GitHub hands back as external_id),
// and the identifier one Airlock offered. Then the clicking user is checked by the same rule as a
// PR comment command (triggers/actor-permission.ts): an Airlock maintainer or admin linked through
// GitHub sign-in, or (GitHub's payload carries no author association for a click) a person GitHub
// says has write access or more, which is what the rule's COLLABORATOR stands for; bots never. The dispatch is runs/dispatch.ts's, so a second click (or a
// replayed delivery) finds the run no longer suggested and dispatches nothing.
import type { components } from "@octokit/openapi-webhooks-types";
import { z } from "zod";
import type { Db } from "@/server/db";
import { appendRunEvents } from "@/server/domain/events/append";
import { resolveAirlockActor } from "@/server/domain/evaluation/facts";
import { findRepository } from "@/server/domain/evaluation/load";
import { boundedDetail, sanitizePayload } from "@/server/domain/ingest/delivery/store";
import { loadKnownSecrets } from "@/server/domain/ingest/known-secrets";
import { dispatchRun } from "@/server/domain/runs/dispatch";
import { decideActorPermission } from "@/server/domain/triggers/actor-permission";
import { isAppError } from "@/server/errors";
import { githubClient, type GithubAppCredentials } from "@/server/forges/github/client";
import { formatIssues, issuesToText } from "@/server/lib/zod-issues";
import { REQUESTED_ACTIONS } from "../check-runs/surface";

export const isRequestedAction = (event: string, action: string | null) => event === "check_run" && action === "requested_action";

const zRequestedAction = z.object({
  action: z.literal("requested_action"),
  check_run: z.object({
    id: z.number().int().positive(),
    external_id: z.string().max(200).nullable(),
    head_sha: z.string().regex(/^[0-9a-f]{40}$/),
    app: z.object({ id: z.number().int().positive() }).nullable(),
  }),
  requested_action: z.object({ identifier: z.string().min(1).max(20) }),
  installation: z.object({ id: z.number().int().positive() }).optional(),
  repository: z.object({ full_name: z.string().min(3).max(200) }),
  sender: z.object({ login: z.string().min(1).max(100), id: z.number().int().positive(), type: z.string().max(40) }),
});

type Schemas = components["schemas"];
type Assert<T extends true> = T;
type Fits<Theirs, Ours> = [Theirs] extends [Ours] ? true : false;
// Not exported: tsc checks that GitHub's published payload carries what the schema reads.
type _RequestedActionConformance = [
  Assert<Fits<Schemas["webhook-check-run-requested-action"]["action"], "requested_action">>,
  Assert<Fits<Schemas["webhook-check-run-requested-action"]["check_run"]["id"], number>>,
  Assert<Fits<Schemas["webhook-check-run-requested-action"]["check_run"]["external_id"], string | null>>,
  Assert<Fits<Schemas["webhook-check-run-requested-action"]["check_run"]["head_sha"], string>>,
  Assert<Fits<NonNullable<Schemas["webhook-check-run-requested-action"]["requested_action"]>["identifier"], string | undefined>>,
  Assert<Fits<Schemas["webhook-check-run-requested-action"]["sender"]["login"], string>>,
];

/**
 * The clicking person's role on the repository as GitHub says it (GET .../collaborators/{login}/permission
 * with the installation's token), or null when GitHub does not say.
 */
export type CollaboratorRoleLookup = (q: { fullName: string; installationId: bigint; login: string }) => Promise<string | null>;

/** GitHub's write roles are what the comment rule's COLLABORATOR (or OWNER, MEMBER) means: write access or more. */
const WRITE_ROLES = new Set(["admin", "maintain", "write"]);

export type RequestedActionOutcome = { outcome: "processed" | "ignored" | "rejected"; detail: string; runId: string | null };

/** Applies one recorded requested_action delivery, once (a processed delivery is skipped). */
export async function processRequestedAction(opts: { db: Db; deliveryId: string; collaboratorRole?: CollaboratorRoleLookup | null; now?: Date }): Promise<RequestedActionOutcome> {
  const { db, deliveryId } = opts;
  const now = opts.now ?? new Date();
  const row = await db.webhookDelivery.findUnique({ where: { deliveryId }, select: { payload: true, processedAt: true } });
  if (!row) return { outcome: "ignored", detail: "no such delivery", runId: null };
  if (row.processedAt) return { outcome: "ignored", detail: "already processed", runId: null };
  const decided = await decide(db, row.payload, opts.collaboratorRole ?? null, now);
  const secrets = await loadKnownSecrets(db, now);
  const detail = boundedDetail(sanitizePayload(decided.detail, secrets));
  await db.webhookDelivery.updateMany({ where: { deliveryId, processedAt: null }, data: { outcome: decided.outcome, detail, processedAt: now } });
  return { ...decided, detail };
}

async function decide(db: Db, payload: unknown, collaboratorRole: CollaboratorRoleLookup | null, now: Date): Promise<RequestedActionOutcome> {
  const parsed = zRequestedAction.safeParse(payload);
  if (!parsed.success) return { outcome: "rejected", detail: `requested_action payload refused: ${issuesToText(formatIssues(parsed.error.issues))}`, runId: null };
  const p = parsed.data;
  const ignored = (detail: string, runId: string | null = null): RequestedActionOutcome => ({ outcome: "ignored", detail: `requested_action ignored: ${detail}`, runId });

  const app = await db.githubApp.findUnique({ where: { id: "app" }, select: { appId: true } });
  if (!app) return ignored("no GitHub App is configured");
  if (p.check_run.app?.id !== Number(app.appId)) return ignored(`check run ${p.check_run.id} belongs to another app`);
  const repository = await findRepository(db, p.repository.full_name);
  if (!repository || repository.forge !== "github") return ignored(`repository ${p.repository.full_name} is not a registered GitHub repository`);
  if (repository.disabledAt) return ignored(`repository ${repository.fullName} is disabled`);
  if (repository.githubInstallationId === null || p.installation?.id === undefined || BigInt(p.installation.id) !== repository.githubInstallationId) {
    return ignored(`the click came through installation ${p.installation?.id ?? "(none)"}, not the one that covers ${repository.fullName}`);
  }
  const surface = await db.checkRunSurface.findUnique({ where: { externalId: BigInt(p.check_run.id) }, include: { run: { select: { id: true, number: true, status: true } } } });
  if (!surface || surface.repositoryId !== repository.id || surface.runId !== p.check_run.external_id || surface.headSha !== p.check_run.head_sha) {
    return ignored(`check run ${p.check_run.id} is not one of Airlock's check runs on ${repository.fullName}`);
  }
  const offered = REQUESTED_ACTIONS.find((a) => a.identifier === p.requested_action.identifier);
  if (!offered) return ignored(`"${p.requested_action.identifier}" is not an action Airlock offers`, surface.runId);

  const who = await resolveAirlockActor(db, repository.id, p.sender.id);
  const isBot = p.sender.type.toLowerCase() === "bot";
  let permission = decideActorPermission({ association: null, airlockRole: who?.role ?? null, isBot, via: "comment" });
  let githubRole: string | null = null;
  if (!permission.allowed && !isBot && collaboratorRole) {
    // No Airlock role lets them: GitHub's own word on their access, read as the comment rule reads an association.
    githubRole = await collaboratorRole({ fullName: repository.fullName, installationId: repository.githubInstallationId, login: p.sender.login }).catch(() => null);
    if (githubRole && WRITE_ROLES.has(githubRole)) {
      permission = decideActorPermission({ association: "COLLABORATOR", airlockRole: who?.role ?? null, isBot, via: "comment" });
      permission = { ...permission, reason: `GitHub role ${githubRole} on the repository (${permission.reason})` };
    } else if (githubRole) {
      permission = { allowed: false, reason: `${permission.reason}; GitHub says their role is ${githubRole}, and dispatch needs write access or more` };
    }
  }
  if (!permission.allowed) {
    const why = `${p.sender.login} may not dispatch from GitHub (${permission.reason})`;
    await appendRunEvents({ db, runId: surface.runId, events: [{ type: "log", payload: { stream: "system", text: `"${offered.label}" clicked on GitHub by ${p.sender.login}: refused, ${permission.reason}.` } }] });
    return { outcome: "ignored", detail: `requested_action refused: ${why}`, runId: surface.runId };
  }
  try {
    const dispatched = await dispatchRun({ db, actor: { userId: who?.userId ?? null, label: `${p.sender.login} (GitHub, ${offered.label})` }, runId: surface.runId, taskKind: offered.taskKind, now });
    return { outcome: "processed", detail: `"${offered.label}" by ${p.sender.login} (${permission.reason}): run #${surface.run.number} ${dispatched.status} as ${dispatched.taskKind.replaceAll("_", " ")}`, runId: surface.runId };
  } catch (err) {
    // Already dispatched (a second click, a replay), repository disabled, no stack for repair.
    if (!isAppError(err) || err.status >= 500) throw err;
    return ignored(`run #${surface.run.number}: ${err.message}`, surface.runId);
  }
}

/** The lookup through the app's installation token (the app's `metadata: read` covers it). */
export function githubCollaboratorRole(opts: { app: () => Promise<GithubAppCredentials | null>; baseUrl: string | null }): CollaboratorRoleLookup {
  const baseUrl = opts.baseUrl;
  return async ({ fullName, installationId, login }) => {
    const app = await opts.app();
    if (!app) return null;
    const [owner, repo] = fullName.split("/") as [string, string];
    const client = githubClient({ auth: { kind: "installation", app, installationId: installationId.toString(), repository: fullName }, baseUrl });
    const { data } = await client.rest.repos.getCollaboratorPermissionLevel({ owner, repo, username: login });
    return (data as { role_name?: string }).role_name ?? data.permission;
  };
}
