// "checkrun.sync": writes a run's state to its check run on GitHub, once per state. Creates the
// check run on the first sync (POST .../check-runs on the run's head commit), updates it after
// (PATCH .../check-runs/{id}); a state already written is not written again, so a retried or
// duplicated job changes nothing, and a create whose answer was lost is found by its external id
// (the run id) on the commit instead of made twice. One job queue per run (surface.ts) keeps syncs in order.
import type { Db } from "@/server/db";
import { inertSummary } from "@/server/domain/inert-text";
import type { GithubClient } from "@/server/forges/github/client";
import { CHECK_RUN_NAME, checkRunBody, stateKey, surfaceStateOf } from "./surface";

export type SyncOutcome = { kind: "written"; state: string; externalId: string } | { kind: "unchanged"; state: string } | { kind: "none"; reason: string };

/** The installation's client for one repository (scoped token), or null when the app is not set up. */
export type CheckRunClientFor = (repository: { fullName: string; installationId: bigint }) => Promise<GithubClient | null>;

/**
 * The diagnosis summary the check run may carry: only when the change gate already exempted
 * posting this run's diagnosis as a bot comment (requestDiagnosisComment's direct write-back,
 * made at the run's end: the repository allows bot posts and the stack allows the exception),
 * made inert exactly as that comment is. Otherwise null, and the check run links to the run.
 */
async function exemptDiagnosis(db: Db, runId: string): Promise<string | null> {
  const exempt = await db.writeBack.findFirst({ where: { runId, kind: "comment", approvalId: null, outcome: { in: ["pending", "succeeded"] } }, select: { id: true } });
  if (!exempt) return null;
  const diagnosis = await db.artifact.findFirst({ where: { runId, kind: "diagnosis" }, orderBy: { createdAt: "desc" }, select: { content: true } });
  return diagnosis?.content ? inertSummary(diagnosis.content).text : null;
}

async function existingCheckRun(client: GithubClient, q: { owner: string; repo: string; headSha: string; runId: string }): Promise<bigint | null> {
  const { data } = await client.rest.checks.listForRef({ owner: q.owner, repo: q.repo, ref: q.headSha, check_name: CHECK_RUN_NAME, filter: "all", per_page: 100 });
  const found = data.check_runs.find((c) => c.external_id === q.runId);
  return found ? BigInt(found.id) : null;
}

export async function syncCheckRun(opts: { db: Db; runId: string; clientFor: CheckRunClientFor; airlockUrl: string }): Promise<SyncOutcome> {
  const { db, runId } = opts;
  const surface = await db.checkRunSurface.findUnique({
    where: { runId },
    include: { run: { select: { id: true, number: true, title: true, status: true, taskKind: true, repository: { select: { fullName: true } }, job: { select: { name: true } }, pipeline: { select: { checkName: true } } } } },
  });
  if (!surface) return { kind: "none", reason: "the run has no check run on GitHub" };
  const { run } = surface;
  const state = surfaceStateOf(run.status);
  const diagnosis = state === "succeeded" && run.taskKind === "diagnose" ? await exemptDiagnosis(db, runId) : null;
  const key = stateKey(state, diagnosis !== null);
  if (surface.state === key) return { kind: "unchanged", state: key };

  const client = await opts.clientFor({ fullName: run.repository.fullName, installationId: surface.installationId });
  if (!client) {
    await db.checkRunSurface.update({ where: { runId }, data: { lastError: "no GitHub App is configured" } });
    return { kind: "none", reason: "no GitHub App is configured" };
  }
  const [owner, repo] = run.repository.fullName.split("/") as [string, string];
  const body = checkRunBody(
    { id: run.id, number: run.number, title: run.title, status: run.status, taskKind: run.taskKind, failedCheck: run.job?.name ?? run.pipeline?.checkName ?? null },
    state,
    { detailsUrl: `${opts.airlockUrl.replace(/\/+$/, "")}/runs/${run.id}`, diagnosis },
  );
  let externalId: string;
  try {
    // A create whose answer was never stored (a crash, a timeout) left a check run with our
    // external id on the commit: find it rather than make a second one.
    const known = surface.externalId ?? (await existingCheckRun(client, { owner, repo, headSha: surface.headSha, runId: run.id }));
    if (known === null) {
      const res = await client.rest.checks.create({ owner, repo, head_sha: surface.headSha, ...body });
      externalId = String(res.data.id);
    } else {
      externalId = known.toString();
      await client.rest.checks.update({ owner, repo, check_run_id: Number(known), ...body });
    }
  } catch (err) {
    const e = err as { status?: number; message?: string };
    const reason = `GitHub refused the check run (${e.status ?? "no answer"}): ${(e.message ?? String(err)).slice(0, 300)}`;
    await db.checkRunSurface.update({ where: { runId }, data: { lastError: reason } });
    // 4xx will not change on a retry; anything else is retried by the queue.
    if (e.status && e.status >= 400 && e.status < 500) return { kind: "none", reason };
    throw err;
  }
  await db.checkRunSurface.update({ where: { runId }, data: { externalId: BigInt(externalId), state: key, lastError: null } });
  return { kind: "written", state: key, externalId };
}
