// The "triage.rerun" job: a GitHub rerun that triage decided, performed after the decision
// committed. Runs at most once per triage row: only a `pending` action calls GitHub, and the
// outcome is recorded on the row (requested, or failed with GitHub's reason and the owners told).
import { transaction, type Db } from "@/server/db";
import { rerunGithubCheck } from "@/server/forges/github/rerun-check";
import { ForgeError } from "@/server/forges/types";
import { notifyOwner } from "./notify-owner";

export type GithubRerunSettings = { githubToken: string | null; githubApiUrl?: string | null };

export async function performTriageRerun(opts: { db: Db; triageId: string; settings: GithubRerunSettings }): Promise<{ status: string; detail: string }> {
  const { db } = opts;
  const triage = await db.triageDecision.findUnique({ where: { id: opts.triageId } });
  if (!triage || triage.action !== "rerun_check") return { status: "missing", detail: "no rerun to perform" };
  if (triage.actionStatus !== "pending") return { status: triage.actionStatus, detail: "already performed" };
  const repository = await db.repository.findUniqueOrThrow({ where: { id: triage.repositoryId }, select: { fullName: true } });
  let status: "requested" | "failed";
  let detail: string;
  try {
    if (!opts.settings.githubToken) throw new ForgeError("No GITHUB_TOKEN is configured, so Airlock cannot rerun checks on GitHub.", "unsupported");
    if (!triage.rerunVia || !triage.rerunExternalId) throw new ForgeError("the triage row names nothing to rerun", "forge_error");
    const done = await rerunGithubCheck({
      token: opts.settings.githubToken,
      baseUrl: opts.settings.githubApiUrl ?? undefined,
      target: { repository: repository.fullName, via: triage.rerunVia, externalId: triage.rerunExternalId },
    });
    status = "requested";
    detail = done.detail;
  } catch (err) {
    // A refusal is an outcome, not a retry: GitHub would refuse again (and a retry must never
    // rerun twice). Anything else (network) is thrown so the job is retried.
    if (!(err instanceof ForgeError)) throw err;
    status = "failed";
    detail = err.message;
  }
  await recordRerunOutcome(db, { triage, from: "pending", status, detail });
  return { status, detail };
}

type TriageRow = { id: string; repositoryId: string; pipelineId: string; actionDetail: string };

/** The rerun's outcome on its triage row, once (only from `from`); a failed one tells the owners. */
async function recordRerunOutcome(db: Db, opts: { triage: TriageRow; from: "pending" | "requested"; status: "requested" | "failed"; detail: string }) {
  const { triage, status, detail } = opts;
  await transaction(db, "recordTriageRerun", async (tx) => {
    const updated = await tx.triageDecision.updateMany({
      where: { id: triage.id, actionStatus: opts.from },
      data: { actionStatus: status, actionDetail: `${triage.actionDetail}; ${detail}`.slice(0, 2000) },
    });
    // A rerun that could not start leaves the failure with nobody acting on it: its owners are told.
    if (updated.count === 1 && status === "failed") {
      const repo = await tx.repository.findUniqueOrThrow({ where: { id: triage.repositoryId } });
      const pipeline = await tx.pipeline.findUniqueOrThrow({ where: { id: triage.pipelineId }, select: { checkName: true } });
      const row = await tx.triageDecision.findUniqueOrThrow({ where: { id: triage.id } });
      const note = await notifyOwner(tx, { triage: row, repository: repo, checkName: pipeline.checkName, pullRequestId: null, ruleName: null, why: "Triage decided to rerun this failure once, but the rerun could not be started." });
      await tx.triageDecision.update({ where: { id: triage.id }, data: { notificationId: note.id } });
    }
  });
}

/**
 * The local CI cannot run a check triage queued (the repository's check command was removed):
 * each local rerun requested at that commit fails once with the reason, and its owners are told,
 * rather than the job retrying a run that can never start.
 */
export async function failLocalTriageReruns(opts: { db: Db; repositoryId: string; sha: string; reason: string }) {
  const rows = await opts.db.triageDecision.findMany({
    where: { repositoryId: opts.repositoryId, headSha: opts.sha, action: "rerun_check", actionStatus: "requested", rerunVia: null },
    select: { id: true, repositoryId: true, pipelineId: true, actionDetail: true },
  });
  for (const triage of rows) await recordRerunOutcome(opts.db, { triage, from: "requested", status: "failed", detail: opts.reason });
  return rows.length;
}
