import type { Db, RepoRole, RunStatus, Tx } from "@/server/db";
import { transaction } from "@/server/db";
import { AppError } from "@/server/errors";
import { releaseTagPattern } from "@/server/forges/local/publish-release";
import type { ReleaseRequest } from "@/server/forges/types";
import { contentDigest } from "@/server/lib/digest";
import { type AuditActor, recordAudit } from "../audit";
import { openGapRefusal } from "../approvals/release-gaps";
import { askChangeGate, type GateOutcome } from "../approvals/request-write-back";
import { maxFrozenReportChars, type PresentedRelease, zPresentedRelease } from "../approvals/schemas";
import { inertSummary } from "../inert-text";
import { prTitle } from "./open-pr";
import { lockRunOrThrow } from "../runs/transition";
import { isUnfinishedRun } from "../runs/lifecycle";

// publish_release: privileged, so always a person (change-gate rule release_publish_needs_a_person,
// which no repository exception or stack mode reaches). A maintainer asks from a finished run with
// a readiness report; the approval screen shows the tag, the commit, the release's name and notes
// byte for byte, the readiness report, and the artifact published with its digest. At execution
// the artifact's bytes are read again and their digest checked against the approved one: a
// changed artifact is stale and nothing is published. Local forge: an annotated tag and a release
// record with the artifact; GitHub: POST /releases and the artifact as its asset.

type RunForRelease = { id: string; number: number; title: string; status: RunStatus; headSha: string; contextBundle: unknown; repositoryId: string };

/** The tag the run reviewed (release runs carry it in their context bundle's ref). */
export function releaseTagOf(run: Pick<RunForRelease, "contextBundle">): string | null {
  const ref = (run.contextBundle as { ref?: { tag?: unknown } } | null)?.ref;
  return typeof ref?.tag === "string" && ref.tag ? ref.tag : null;
}

async function openRequestOf(db: Db | Tx, runId: string): Promise<string | null> {
  const [approval, writeBack] = await Promise.all([
    db.approvalRequest.findFirst({ where: { runId, action: "publish_release", status: { in: ["pending", "approved", "executed"] } }, select: { id: true, status: true } }),
    db.writeBack.findFirst({ where: { runId, kind: "publish_release", outcome: { in: ["pending", "succeeded"] } }, select: { id: true, outcome: true } }),
  ]);
  if (writeBack) return `write-back ${writeBack.id} ${writeBack.outcome}`;
  if (approval) return `approval ${approval.id} ${approval.status}`;
  return null;
}

/** Why the run cannot ask to publish (null: it may). */
export async function publishReleaseRefusal(db: Db | Tx, run: Pick<RunForRelease, "id" | "status">): Promise<string | null> {
  if (isUnfinishedRun(run.status)) return "The run has not finished; a release is published from its finished review.";
  const report = await db.artifact.findFirst({ where: { runId: run.id, kind: "report" }, select: { id: true } });
  if (!report) return "A release is published with its readiness report, and this run produced none.";
  const open = await openRequestOf(db, run.id);
  if (open) return `Publishing was already asked for (${open}).`;
  return openGapRefusal(db, run.id);
}

/** The verdict the run page shows beside "Publish release" (hidden: not a release review). */
export async function publishReleaseControl(db: Db, opts: { run: RunForRelease & { taskKind: string }; role: RepoRole }) {
  const tag = releaseTagOf(opts.run);
  if (opts.run.taskKind !== "release_review") return { shown: false, allowed: false, reason: "Only a release review publishes a release.", tag };
  const refusal = (await publishReleaseRefusal(db, opts.run)) ?? (opts.role === "viewer" ? "Asking to publish needs the maintainer role." : null);
  return { shown: true, allowed: refusal === null, reason: refusal, tag };
}

/** The release notes, exactly as published (the forge appends only its hidden marker line). */
export function releaseNotes(opts: { tag: string; runNumber: number; artifact: { name: string; digest: string; sizeBytes: number }; report: { name: string; digest: string }; notes?: string | null }): string {
  const extra = opts.notes ? inertSummary(opts.notes.slice(0, 8_000)).text : "";
  return [
    `Release ${opts.tag}.`,
    ...(extra ? ["", extra] : []),
    "",
    `- Artifact: \`${opts.artifact.name}\` ${opts.artifact.digest} (${opts.artifact.sizeBytes.toLocaleString("en")} bytes)`,
    `- Readiness report: \`${opts.report.name}\` ${opts.report.digest}, from Airlock run #${opts.runNumber}`,
    "",
    "<sub>Published by Airlock after a person approved it.</sub>",
  ].join("\n");
}

export type PublishReleaseInput = { tag?: string | null; artifactId?: string | null; name?: string | null; notes?: string | null };

export function requestPublishRelease(opts: { db: Db; runId: string; by: AuditActor; input?: PublishReleaseInput; now?: Date }): Promise<GateOutcome & { release: PresentedRelease }> {
  const now = opts.now ?? new Date();
  return transaction(opts.db, "requestPublishRelease", async (tx) => {
    await lockRunOrThrow(tx, opts.runId);
    const run = await tx.agentDispatchRun.findUniqueOrThrow({
      where: { id: opts.runId },
      select: { id: true, number: true, title: true, status: true, headSha: true, contextBundle: true, repositoryId: true },
    });
    const refusal = await publishReleaseRefusal(tx, run);
    if (refusal) throw new AppError("PRECONDITION_FAILED", refusal, { reason: "publish_release_refused" });
    const tag = opts.input?.tag?.trim() || releaseTagOf(run);
    if (!tag) throw new AppError("BAD_REQUEST", "Name the tag to publish: the run carries none.", { reason: "invalid_tag" });
    if (!releaseTagPattern.test(tag)) throw new AppError("BAD_REQUEST", `"${tag.slice(0, 100)}" is not a tag name Airlock publishes (letters, digits, . _ + / -, up to 100).`, { reason: "invalid_tag" });
    const report = await tx.artifact.findFirstOrThrow({ where: { runId: run.id, kind: "report" }, orderBy: { createdAt: "desc" }, select: { id: true, name: true, digest: true, content: true, attemptId: true } });
    const artifact = opts.input?.artifactId
      ? await tx.artifact.findFirst({ where: { id: opts.input.artifactId, runId: run.id }, select: { id: true, kind: true, name: true, digest: true, sizeBytes: true, content: true } })
      : await tx.artifact.findFirst({ where: { id: report.id }, select: { id: true, kind: true, name: true, digest: true, sizeBytes: true, content: true } });
    if (!artifact) throw new AppError("NOT_FOUND", "No such artifact on this run.");
    if (artifact.kind === "patch") throw new AppError("BAD_REQUEST", "A patch is pushed, not published as a release artifact.", { reason: "invalid_artifact" });
    if (artifact.content === null || contentDigest(artifact.content) !== artifact.digest) {
      throw new AppError("PRECONDITION_FAILED", `The artifact ${artifact.name} does not match its digest ${artifact.digest}; it is not published.`, { reason: "stale" });
    }
    const chars = [...(report.content ?? "")];
    const release: PresentedRelease = {
      tag,
      commitSha: run.headSha,
      name: prTitle(opts.input?.name || tag),
      notes: releaseNotes({ tag, runNumber: run.number, artifact, report, notes: opts.input?.notes }),
      artifact: { id: artifact.id, name: artifact.name, digest: artifact.digest, sizeBytes: artifact.sizeBytes },
      report: { id: report.id, name: report.name, digest: report.digest, content: chars.slice(0, maxFrozenReportChars).join(""), cut: chars.length > maxFrozenReportChars },
    };
    const asked = await askChangeGate({
      db: tx,
      runId: run.id,
      action: "publish_release",
      // A release names its tag where other kinds name a branch (targetParts shows "tag …").
      target: { branch: tag, headSha: run.headSha },
      artifactId: artifact.id,
      attemptId: report.attemptId,
      message: release.name,
      extra: { release },
      now,
    });
    await recordAudit(tx, {
      actor: opts.by,
      action: "writeback.request",
      objectType: "AgentDispatchRun",
      objectId: run.id,
      repositoryId: run.repositoryId,
      detail: { action: "publish_release", tag, artifactDigest: artifact.digest, reportDigest: report.digest, ...(asked.kind === "approval" ? { approvalId: asked.approvalId } : {}) },
    });
    return { ...asked, release };
  });
}

/**
 * What the executor publishes: the approved artifact's bytes, read again and checked against the
 * approved digest. A changed artifact (or a missing one) is stale: nothing is published.
 */
export async function releaseToPublish(db: Db, wb: { runId: string; artifactDigest: string | null; target: unknown }): Promise<{ ok: true; release: ReleaseRequest } | { ok: false; reason: string }> {
  const parsed = zPresentedRelease.omit({ report: true }).safeParse((wb.target as { release?: unknown } | null)?.release);
  if (!parsed.success) return { ok: false, reason: "This release write-back carries no valid release." };
  const r = parsed.data;
  if (!wb.artifactDigest || wb.artifactDigest !== r.artifact.digest) return { ok: false, reason: "The release's artifact is not the approved one; nothing is published." };
  const artifact = await db.artifact.findFirst({ where: { id: r.artifact.id, runId: wb.runId }, select: { content: true, name: true } });
  if (!artifact || artifact.content === null) return { ok: false, reason: `Stale: the approved artifact ${r.artifact.name} is gone; nothing is published.` };
  const now = contentDigest(artifact.content);
  if (now !== r.artifact.digest) return { ok: false, reason: `Stale: the artifact ${r.artifact.name} changed since it was approved (${r.artifact.digest} then, ${now} now); nothing is published.` };
  return { ok: true, release: { tag: r.tag, name: r.name, notes: r.notes, commitSha: r.commitSha, artifact: { name: r.artifact.name, digest: r.artifact.digest, content: artifact.content } } };
}
