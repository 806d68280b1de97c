import type { Db, RepoRole, RunStatus, Tx } from "@/server/db";
import { transaction } from "@/server/db";
import { AppError } from "@/server/errors";
import { type AuditActor, recordAudit } from "../audit";
import { askChangeGate, type GateOutcome } from "../approvals/request-write-back";
import type { PresentedOpenPr } from "../approvals/schemas";
import { inertSummary } from "../inert-text";
import { lockRunOrThrow } from "../runs/transition";
import { isUnfinishedRun } from "../runs/lifecycle";

// open_pr: a run on a branch that has no pull request asks to push its approved patch to a NEW
// branch and open a PR from it. A maintainer asks for it from the run page; the change gate
// decides whether a person approves (a fork's or an unplaced run's PR always needs one: rule
// untrusted_origin_needs_approval), and the approval screen shows the branch name, the base, the
// title and the body byte for byte, which are exactly what the executor sends (they are frozen in
// `presented.openPr` and copied into the WriteBack's target). A run whose branch already has a PR
// is refused with the reason: its patch goes to that PR's branch.

export const maxPrTitleChars = 200;
export const maxPrNotesChars = 4_000;

/** A branch name the local forge and GitHub both accept, and git cannot read as an option. */
export const prBranchPattern = /^(?!-)(?!.*\.\.)(?!.*\/\/)(?!.*\.lock$)[A-Za-z0-9._/-]{1,100}(?<![./])$/;

export const defaultPrBranch = (runNumber: number) => `airlock/run-${runNumber}`;

const controlChars = /[\u0000-\u001F\u007F\u200B-\u200F\u202A-\u202E\u2066-\u2069]/g;

/** A one-line title: no control or bidirectional characters, bounded. */
export function prTitle(text: string): string {
  const clean = text.replace(controlChars, " ").replace(/\s+/g, " ").trim();
  return [...clean].slice(0, maxPrTitleChars).join("").trim();
}

/** The exact PR body (the forge appends only its hidden write-back marker line). */
export function openPrBody(opts: { runNumber: number; runTitle: string; artifactName: string; artifactDigest: string; base: string; fromSha: string; notes?: string | null }): string {
  const notes = opts.notes ? inertSummary(opts.notes.slice(0, maxPrNotesChars * 2)) : null;
  return [
    `This pull request carries the patch of Airlock run #${opts.runNumber} (${inertSummary(prTitle(opts.runTitle)).text}).`,
    "",
    `- Patch: \`${opts.artifactName}\` ${opts.artifactDigest}`,
    `- Based on \`${opts.fromSha.slice(0, 12)}\`, the commit the agent worked on; opened against \`${opts.base}\`.`,
    ...(notes?.text ? ["", [...notes.text].slice(0, maxPrNotesChars).join("")] : []),
    "",
    `<sub>Written by an agent and opened by Airlock after the change gate · patch ${opts.artifactDigest}</sub>`,
  ].join("\n");
}

type RunForPr = { id: string; number: number; status: RunStatus; headBranch: string | null; pullRequestId: string | null; repositoryId: string };

/** The open PR of the run's branch, if any (the run's own, or one opened on its branch since). */
async function prOfBranch(db: Db | Tx, run: RunForPr): Promise<{ number: number; headRef: string } | null> {
  if (run.pullRequestId) return db.pullRequest.findUnique({ where: { id: run.pullRequestId }, select: { number: true, headRef: true } });
  if (!run.headBranch) return null;
  return db.pullRequest.findFirst({ where: { repositoryId: run.repositoryId, headRef: run.headBranch, state: "open" }, select: { number: true, headRef: true } });
}

/** An earlier open_pr of this run that still stands (pending, approved, executed, or a write-back not failed). */
async function openRequestOf(db: Db | Tx, runId: string): Promise<string | null> {
  const [approval, writeBack] = await Promise.all([
    db.approvalRequest.findFirst({ where: { runId, action: "open_pr", status: { in: ["pending", "approved", "executed"] } }, select: { id: true, status: true } }),
    db.writeBack.findFirst({ where: { runId, kind: "open_pr", outcome: { in: ["pending", "succeeded"] } }, select: { id: true, outcome: true } }),
  ]);
  if (writeBack) return `write-back ${writeBack.id} ${writeBack.outcome}`;
  if (approval) return `approval ${approval.id} ${approval.status}`;
  return null;
}

/** Why the run cannot ask for a PR (null: it may), for the run page and the request alike. */
export async function openPrRefusal(db: Db | Tx, run: RunForPr): Promise<string | null> {
  if (isUnfinishedRun(run.status)) return "The run has not finished; a pull request is opened from its finished patch.";
  const pr = await prOfBranch(db, run);
  if (pr) return `The run's branch ${pr.headRef} already has pull request #${pr.number}: its patch goes to that PR's branch, not to a new PR.`;
  const patch = await db.artifact.findFirst({ where: { runId: run.id, kind: "patch" }, select: { id: true } });
  if (!patch) return "The run produced no patch to open a pull request with.";
  const open = await openRequestOf(db, run.id);
  if (open) return `A pull request was already asked for (${open}).`;
  return null;
}

/** The verdict the run page shows beside "Open a pull request" (hidden: the run is on a PR). */
export async function openPrControl(db: Db, opts: { run: RunForPr; role: RepoRole }): Promise<{ shown: boolean; allowed: boolean; reason: string | null; defaultBranch: string }> {
  const defaultBranch = defaultPrBranch(opts.run.number);
  if (opts.run.pullRequestId) return { shown: false, allowed: false, reason: "The run is on a pull request.", defaultBranch };
  const refusal = (await openPrRefusal(db, opts.run)) ?? (opts.role === "viewer" ? "Opening a pull request needs the maintainer role." : null);
  return { shown: true, allowed: refusal === null, reason: refusal, defaultBranch };
}

export type OpenPrInput = { branch?: string | null; title?: string | null; notes?: string | null };

/**
 * Asks the change gate to open a PR with the run's latest patch. The run row is locked, so two
 * requests (a double click) make one.
 */
export function requestOpenPr(opts: { db: Db; runId: string; by: AuditActor; input?: OpenPrInput; now?: Date }): Promise<GateOutcome & { openPr: PresentedOpenPr }> {
  const now = opts.now ?? new Date();
  return transaction(opts.db, "requestOpenPr", async (tx) => {
    await lockRunOrThrow(tx, opts.runId);
    const run = await tx.agentDispatchRun.findUniqueOrThrow({
      where: { id: opts.runId },
      select: { id: true, number: true, title: true, status: true, headSha: true, headBranch: true, pullRequestId: true, repositoryId: true, repository: { select: { defaultBranch: true } } },
    });
    const refusal = await openPrRefusal(tx, run);
    if (refusal) throw new AppError("PRECONDITION_FAILED", refusal, { reason: "open_pr_refused" });
    const branch = opts.input?.branch?.trim() || defaultPrBranch(run.number);
    if (!prBranchPattern.test(branch)) throw new AppError("BAD_REQUEST", `"${branch.slice(0, 100)}" is not a branch name Airlock opens a PR from (letters, digits, . _ / -, up to 100).`, { reason: "invalid_branch" });
    const base = run.headBranch ?? run.repository.defaultBranch;
    if (branch === base || branch === run.repository.defaultBranch) throw new AppError("BAD_REQUEST", `The PR needs a new branch, not ${branch}.`, { reason: "invalid_branch" });
    const patch = await tx.artifact.findFirstOrThrow({ where: { runId: run.id, kind: "patch" }, orderBy: { createdAt: "desc" }, select: { id: true, name: true, digest: true, attemptId: true } });
    const title = prTitle(opts.input?.title || `Airlock run #${run.number}: ${run.title}`);
    if (!title) throw new AppError("BAD_REQUEST", "A pull request needs a title.", { reason: "invalid_title" });
    const openPr: PresentedOpenPr = {
      branch,
      fromSha: run.headSha,
      base,
      title,
      body: openPrBody({ runNumber: run.number, runTitle: run.title, artifactName: patch.name, artifactDigest: patch.digest, base, fromSha: run.headSha, notes: opts.input?.notes }),
    };
    const asked = await askChangeGate({
      db: tx,
      runId: run.id,
      action: "open_pr",
      // The new branch, starting at the commit the agent worked on.
      target: { branch, headSha: run.headSha },
      artifactId: patch.id,
      attemptId: patch.attemptId,
      message: `${title}\n\nThe agent's patch from Airlock run #${run.number}.`,
      extra: { openPr },
      now,
    });
    await recordAudit(tx, {
      actor: opts.by,
      action: "writeback.request",
      objectType: "AgentDispatchRun",
      objectId: run.id,
      repositoryId: run.repositoryId,
      detail: { action: "open_pr", branch, base, artifactDigest: patch.digest, ...(asked.kind === "approval" ? { approvalId: asked.approvalId } : asked.kind === "direct" ? { writeBackId: asked.writeBackId } : {}) },
    });
    return { ...asked, openPr };
  });
}
