import type { Db, Tx } from "@/server/db";
import { transaction } from "@/server/db";
import { git, GitError } from "@/server/forges/local/git";
import { bareRepoPath, resolveRevision } from "@/server/forges/local/repositories";
import type { RollBackRequest } from "@/server/forges/types";
import { contentDigest } from "@/server/lib/digest";
import { requestWriteBack } from "../approvals/request-write-back";
import { type PresentedRollBack, zPresentedRollBack } from "../approvals/schemas";
import { appendRunEvents } from "../events/append";

// roll_back: CI triage decided a failed deploy rolls back (disposition roll_back). This makes it
// an approval item on the run the failure dispatched, executed once a person approves (rule
// roll_back_needs_a_person), in the way the repository chose (Repository.rollBackMode):
//  - revert: the reverse diff of the commit the failing deploy ran, committed as
//    `Revert "<subject>"` on its branch and pushed exactly like push_commits (same forge path,
//    same lease on the head the approver saw, same trailer reconciliation). The approval shows the
//    revert diff (a patch artifact of the run). The diff is computed from the repository's own git
//    history, so this mode is built for the local forge; on GitHub it is refused with the reason.
//  - rerun_last_good: the last run of the same deploy check that succeeded before the failure is
//    run again (GitHub: its workflow run is rerun; local: the local CI runs at its commit).
// Idempotent: one roll-back request per run, found again by a retried job.

export type RollBackOutcome = { status: "requested"; approvalId: string } | { status: "exists" | "not_applicable" | "refused"; detail: string };

type Loaded = NonNullable<Awaited<ReturnType<typeof loadTriage>>>;

async function loadTriage(db: Db | Tx, triageId: string) {
  return db.triageDecision.findUnique({
    where: { id: triageId },
    include: { pipeline: { include: { repository: { select: { id: true, fullName: true, forge: true, defaultBranch: true, rollBackMode: true } } } } },
  });
}

/** The revert of `sha` on the local forge: the reverse diff against its first parent, and its subject. */
async function localRevert(dataDir: string, repository: string, sha: string): Promise<{ patch: string; subject: string } | { refused: string }> {
  const repoPath = bareRepoPath(dataDir, repository);
  try {
    const parent = (await git(["--git-dir", repoPath, "rev-parse", "--verify", "--quiet", `${sha}^1`])).trim();
    const patch = await git(["--git-dir", repoPath, "diff", "--full-index", sha, parent]);
    const subject = (await git(["--git-dir", repoPath, "log", "-1", "--format=%s", sha])).trim();
    if (!patch.trim()) return { refused: `commit ${sha.slice(0, 12)} changed nothing, so there is nothing to revert` };
    return { patch, subject };
  } catch (err) {
    if (err instanceof GitError) return { refused: `commit ${sha.slice(0, 12)} cannot be reverted here (it is not in the repository, or it has no parent)` };
    throw err;
  }
}

async function noteOnTriage(tx: Tx, t: Loaded, detail: string) {
  await tx.triageDecision.update({ where: { id: t.id }, data: { actionDetail: `${t.actionDetail} · ${detail}`.slice(0, 2000) } });
}

/** The roll-back a triage decision asks for, as an approval item on its run (at most one per run). */
export async function requestRollBack(opts: { db: Db; triageId: string; dataDir: string; now?: Date }): Promise<RollBackOutcome> {
  const now = opts.now ?? new Date();
  const first = await loadTriage(opts.db, opts.triageId);
  if (!first || first.disposition !== "roll_back" || first.action !== "roll_back_request") return { status: "not_applicable", detail: "no roll-back was decided" };
  const repo = first.pipeline.repository;
  // The git work happens before the transaction; what it read is checked again inside.
  const revert = repo.rollBackMode === "revert" && repo.forge === "local" ? await localRevert(opts.dataDir, repo.fullName, first.pipeline.headSha) : null;
  const branch = first.pipeline.headBranch ?? repo.defaultBranch;
  const tip = repo.rollBackMode === "revert" && repo.forge === "local" ? await resolveRevision(bareRepoPath(opts.dataDir, repo.fullName), branch) : null;

  return transaction(opts.db, "requestRollBack", async (tx): Promise<RollBackOutcome> => {
    await tx.$queryRaw`SELECT "id" FROM "TriageDecision" WHERE "id" = ${opts.triageId} FOR UPDATE`;
    const t = await loadTriage(tx, opts.triageId);
    if (!t) return { status: "not_applicable", detail: "no such triage decision" };
    if (!t.runId) {
      await noteOnTriage(tx, t, "no run to attach the roll-back approval to; the owners were notified");
      return { status: "not_applicable", detail: "the failure dispatched no run" };
    }
    const open = await tx.approvalRequest.findFirst({ where: { runId: t.runId, action: "roll_back" }, select: { id: true, status: true } });
    if (open) return { status: "exists", detail: `approval ${open.id} ${open.status}` };
    const failing = t.pipeline;
    const base: Omit<PresentedRollBack, "mode" | "good"> = { triageId: t.id, failingSha: failing.headSha, failingPipelineId: failing.id, failingCheck: failing.checkName, branch };

    if (repo.rollBackMode === "revert") {
      const refusal = repo.forge !== "local" ? "a revert is built from the repository's git history on the local forge only; on GitHub set the repository to rerun the last good deploy" : revert && "refused" in revert ? revert.refused : !tip ? `branch ${branch} is not in the repository` : null;
      if (refusal || !revert || "refused" in revert || !tip) {
        await noteOnTriage(tx, t, `roll back not requested: ${refusal}`);
        return { status: "refused", detail: refusal ?? "no revert" };
      }
      const name = `revert-${failing.headSha.slice(0, 12)}.patch`;
      const artifact = await tx.artifact.create({
        data: { runId: t.runId, kind: "patch", name, content: revert.patch, mediaType: "text/x-diff", digest: contentDigest(revert.patch), sizeBytes: Buffer.byteLength(revert.patch) },
      });
      await appendRunEvents({ db: tx, runId: t.runId, events: [{ type: "artifact_produced", payload: { artifactId: artifact.id, kind: "patch", name, digest: artifact.digest, sizeBytes: artifact.sizeBytes } }] });
      const asked = await requestWriteBack({
        db: tx,
        runId: t.runId,
        action: "roll_back",
        target: { branch, headSha: tip },
        artifactId: artifact.id,
        message: `Revert "${revert.subject.slice(0, 200)}"\n\nThis reverts commit ${failing.headSha}: its deploy check ${failing.checkName} failed (triage ${t.id}).`,
        extra: { rollBack: { ...base, mode: "revert", good: null } },
        now,
      });
      if (asked.kind !== "approval") throw new Error("a roll-back always waits for a person");
      await noteOnTriage(tx, t, `revert of ${failing.headSha.slice(0, 12)} waiting for approval ${asked.approvalId}`);
      return { status: "requested", approvalId: asked.approvalId };
    }

    const good = await tx.pipeline.findFirst({
      where: { repositoryId: repo.id, workflowName: failing.workflowName, checkName: failing.checkName, conclusion: "success", createdAt: { lt: failing.createdAt }, id: { not: failing.id } },
      orderBy: { createdAt: "desc" },
      select: { id: true, headSha: true, headBranch: true, externalId: true, url: true },
    });
    if (!good) {
      await noteOnTriage(tx, t, `roll back not requested: no earlier ${failing.checkName} succeeded, so there is no good deploy to rerun`);
      return { status: "refused", detail: "no good deploy to rerun" };
    }
    const asked = await requestWriteBack({
      db: tx,
      runId: t.runId,
      action: "roll_back",
      // No head to hold: a rerun commits nothing. GitHub reruns the good deploy's workflow run.
      target: { ...(repo.forge === "github" ? { check: good.externalId } : {}) },
      message: `Rerun the last good deploy ${good.headSha.slice(0, 12)} (${failing.checkName}) after ${failing.headSha.slice(0, 12)} failed (triage ${t.id}).`,
      extra: { rollBack: { ...base, mode: "rerun_last_good", good: { pipelineId: good.id, sha: good.headSha, branch: good.headBranch, externalId: good.externalId, url: good.url } } },
      now,
    });
    if (asked.kind !== "approval") throw new Error("a roll-back always waits for a person");
    await noteOnTriage(tx, t, `rerun of the last good deploy ${good.headSha.slice(0, 12)} waiting for approval ${asked.approvalId}`);
    return { status: "requested", approvalId: asked.approvalId };
  });
}

/** What the executor sends for a roll_back write-back (null: the record carries no valid roll-back). */
export function rollBackRequestOf(target: unknown): RollBackRequest | null {
  const parsed = zPresentedRollBack.safeParse((target as { rollBack?: unknown } | null)?.rollBack);
  if (!parsed.success) return null;
  const r = parsed.data;
  if (r.mode === "revert") return { mode: "revert", failingSha: r.failingSha };
  if (!r.good) return null;
  return { mode: "rerun_last_good", failingSha: r.failingSha, goodSha: r.good.sha, goodPipelineId: r.good.pipelineId };
}
