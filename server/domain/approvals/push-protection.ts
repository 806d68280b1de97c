import type { Db, Prisma, Tx } from "@/server/db";
import { transaction } from "@/server/db";
import { repositoryRole, roleAtLeast } from "@/server/auth/roles";
import { AppError } from "@/server/errors";
import { contentDigest } from "@/server/lib/digest";
import { cleanText } from "@/server/lib/text-boundary";
import { auditActorOf, type UserActor } from "../actor";
import { recordAudit } from "../audit";
import { redactText, type RedactionEntry } from "../context/redaction/redact";
import { appendRunEvents } from "../events/append";
import { describeFindings, findingsOf } from "../runs/artifact-content";
import { lockApprovalRow } from "./transition";

// Push protection, as GitHub's refuses a push that carries a secret: a patch in which redaction
// found a secret is shown redacted with what was found, and its write-back is refused (approving
// it, and executing it) until an admin of the repository overrides with a reason. The override is
// audited, written into the run's transcript and shown on the approval screen; only then may the
// executor read the withheld original bytes, which are the bytes the approval's digest names: what
// is pushed is what was approved.

export type PushProtection = { findings: RedactionEntry[]; note: string };
export type PushProtectionOverride = { byUserId: string; by: string; at: string; reason: string };

/** Whether an artifact is a protected patch, and what to tell the approver. */
export function pushProtectionOf(artifact: { kind: string; secretFindings: Prisma.JsonValue | null }): PushProtection | null {
  const findings = findingsOf(artifact.secretFindings);
  if (artifact.kind !== "patch" || findings.length === 0) return null;
  return {
    findings,
    note: `Push protection: the patch contains secrets (${describeFindings(findings)}); it is shown redacted, and pushing it is refused unless an admin overrides with a reason.`,
  };
}

export function overrideOf(value: Prisma.JsonValue | null | undefined): PushProtectionOverride | null {
  const o = value as Partial<PushProtectionOverride> | null | undefined;
  return o && typeof o.by === "string" && typeof o.reason === "string" && typeof o.at === "string" && typeof o.byUserId === "string" ? (o as PushProtectionOverride) : null;
}

/** Why a person may not approve this request yet (a protected patch no admin has overridden), or null. */
export function pushProtectionRefusal(approval: { artifact: { kind: string; secretFindings: Prisma.JsonValue | null } | null; pushProtectionOverride: Prisma.JsonValue | null }): string | null {
  return approval.artifact && pushProtectionOf(approval.artifact) && !overrideOf(approval.pushProtectionOverride)
    ? "Push protection: the patch contains secrets; an admin must override it first"
    : null;
}

/** Refuses to approve a protected patch that no admin has overridden. */
export function assertPushAllowed(approval: { artifact: { kind: string; secretFindings: Prisma.JsonValue | null } | null; pushProtectionOverride: Prisma.JsonValue | null }) {
  const protection = approval.artifact ? pushProtectionOf(approval.artifact) : null;
  if (protection && !overrideOf(approval.pushProtectionOverride)) {
    throw new AppError("PRECONDITION_FAILED", protection.note, { reason: "push_protection", details: { findings: protection.findings } });
  }
}

/**
 * The patch the executor may push: the stored text when it is clean, the withheld original bytes
 * when an admin overrode push protection (checked against the approved digest), or a refusal.
 */
export function patchToPush(
  artifact: { kind: string; content: string | null; digest: string; secretFindings: Prisma.JsonValue | null; withheldContent: Uint8Array | null },
  override: Prisma.JsonValue | null | undefined,
): { ok: true; patch: string | undefined } | { ok: false; reason: string } {
  const protection = pushProtectionOf(artifact);
  if (!protection) return { ok: true, patch: artifact.content ?? undefined };
  if (!overrideOf(override)) return { ok: false, reason: protection.note };
  if (!artifact.withheldContent || contentDigest(artifact.withheldContent) !== artifact.digest) {
    return { ok: false, reason: "Push protection: the withheld patch bytes do not match the approved digest; nothing is pushed." };
  }
  return { ok: true, patch: Buffer.from(artifact.withheldContent).toString("utf8") };
}

/** An admin (global, or of the repository) lifts push protection for one pending approval, with a reason. */
export async function overridePushProtection(opts: {
  db: Db;
  actor: UserActor;
  approvalId: string;
  reason: string;
  now?: Date;
}): Promise<{ approvalId: string; override: PushProtectionOverride }> {
  const now = opts.now ?? new Date();
  const reason = redactText(cleanText(opts.reason.trim())).text;
  if (!reason) throw new AppError("BAD_REQUEST", "An override needs a reason.", { reason: "reason_required" });
  return transaction(opts.db, "overridePushProtection", async (tx: Tx) => {
    await lockApprovalRow(tx, opts.approvalId);
    const approval = await tx.approvalRequest.findUniqueOrThrow({
      where: { id: opts.approvalId },
      select: { id: true, status: true, runId: true, pushProtectionOverride: true, artifact: { select: { kind: true, secretFindings: true, digest: true } }, run: { select: { repositoryId: true } } },
    });
    const role = await repositoryRole(tx, opts.actor, approval.run.repositoryId);
    if (!opts.actor.isAdmin && !roleAtLeast(role, "admin")) {
      throw new AppError("FORBIDDEN", "Only an admin of the repository can override push protection.", { reason: "repository_role", details: { required: "admin", role } });
    }
    const protection = approval.artifact ? pushProtectionOf(approval.artifact) : null;
    if (!protection) throw new AppError("CONFLICT", "This approval's patch has no secret findings: there is nothing to override.", { reason: "not_protected" });
    if (approval.status !== "pending") throw new AppError("CONFLICT", `This approval is already ${approval.status}.`, { reason: "already_decided" });
    const existing = overrideOf(approval.pushProtectionOverride);
    if (existing) return { approvalId: approval.id, override: existing };
    const override: PushProtectionOverride = { byUserId: opts.actor.id, by: opts.actor.email, at: now.toISOString(), reason };
    await tx.approvalRequest.update({ where: { id: approval.id }, data: { pushProtectionOverride: override } });
    const actor = auditActorOf(opts.actor);
    await recordAudit(tx, {
      actor,
      action: "approval.push_protection_override",
      objectType: "ApprovalRequest",
      objectId: approval.id,
      repositoryId: approval.run.repositoryId,
      detail: { runId: approval.runId, artifactDigest: approval.artifact?.digest ?? null, findings: protection.findings, reason },
    });
    await appendRunEvents({
      db: tx,
      runId: approval.runId,
      events: [{ type: "log", payload: { stream: "system", text: `${opts.actor.email} overrode push protection for ${approval.id} (${describeFindings(protection.findings)}): ${reason}` } }],
    });
    return { approvalId: approval.id, override };
  });
}
