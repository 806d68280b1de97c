import { z } from "zod";
import { ApprovalStatus } from "@/server/db/generated/enums";
import type { Db, Prisma } from "@/server/db";
import { AppError } from "@/server/errors";
import { zWriteBackKind } from "../events/catalogue";
import { overrideOf, pushProtectionOf, pushProtectionRefusal } from "./push-protection";

// Read models for /approvals: the queue (pending first, oldest first) with counts, and one
// request with everything its review screen shows.

export const zApprovalStatus = z.enum(ApprovalStatus);
export const zApprovalListInput = z.object({
  repositoryId: z.string().min(1).max(100).optional(),
  action: zWriteBackKind.optional(),
  stack: z.string().min(1).max(200).optional(),
  status: zApprovalStatus.optional(),
  /** Only requests older than this many minutes. */
  olderThanMinutes: z.number().int().min(0).max(525_600).optional(),
  limit: z.number().int().min(1).max(200).default(100),
});
export type ApprovalListInput = z.infer<typeof zApprovalListInput>;

function whereOf(repositoryIds: string[] | "all", input: Omit<ApprovalListInput, "limit" | "status">, now: Date): Prisma.ApprovalRequestWhereInput {
  return {
    AND: [
      repositoryIds === "all" ? {} : { run: { repositoryId: { in: repositoryIds } } },
      input.repositoryId ? { run: { repositoryId: input.repositoryId } } : {},
      input.action ? { action: input.action } : {},
      input.stack ? { presented: { path: ["stack", "name"], equals: input.stack } } : {},
      input.olderThanMinutes !== undefined ? { createdAt: { lte: new Date(now.getTime() - input.olderThanMinutes * 60_000) } } : {},
    ],
  };
}

const listSelect = {
  id: true,
  action: true,
  status: true,
  targetBranch: true,
  targetPrNumber: true,
  targetCheck: true,
  targetHeadSha: true,
  artifactDigest: true,
  createdAt: true,
  expiresAt: true,
  decidedAt: true,
  reason: true,
  presented: true,
  decidedBy: { select: { name: true, email: true } },
  run: { select: { id: true, number: true, title: true, status: true, repository: { select: { id: true, fullName: true } } } },
} satisfies Prisma.ApprovalRequestSelect;

export async function listApprovals(opts: { db: Db; repositoryIds: string[] | "all"; input: ApprovalListInput; now: Date }) {
  const where = whereOf(opts.repositoryIds, opts.input, opts.now);
  const status = opts.input.status;
  // Pending first (oldest first), then the decided ones, most recent first.
  const pending = status === undefined || status === "pending" ? await opts.db.approvalRequest.findMany({ where: { AND: [where, { status: "pending" }] }, orderBy: [{ createdAt: "asc" }, { id: "asc" }], take: opts.input.limit, select: listSelect }) : [];
  const rest =
    status !== "pending" && pending.length < opts.input.limit
      ? await opts.db.approvalRequest.findMany({ where: { AND: [where, status ? { status } : { status: { not: "pending" } }] }, orderBy: [{ createdAt: "desc" }, { id: "desc" }], take: opts.input.limit - pending.length, select: listSelect })
      : [];
  return [...pending, ...rest].map(({ presented, ...a }) => {
    const p = presented as { stack?: { name?: string | null } } | null;
    return { ...a, stackName: p?.stack?.name ?? null, expired: a.status === "pending" && a.expiresAt <= opts.now };
  });
}

export async function countApprovals(opts: { db: Db; repositoryIds: string[] | "all"; input: Omit<ApprovalListInput, "limit" | "status">; now: Date }) {
  const rows = await opts.db.approvalRequest.groupBy({ by: ["status"], where: whereOf(opts.repositoryIds, opts.input, opts.now), _count: { _all: true } });
  const counts = Object.fromEntries(zApprovalStatus.options.map((s) => [s, 0])) as Record<z.infer<typeof zApprovalStatus>, number>;
  for (const r of rows) counts[r.status] = r._count._all;
  return counts;
}

export async function approvalRepository(db: Db, approvalId: string): Promise<string> {
  const row = await db.approvalRequest.findUnique({ where: { id: approvalId }, select: { run: { select: { repositoryId: true } } } });
  if (!row) throw new AppError("NOT_FOUND", "No such approval request.");
  return row.run.repositoryId;
}

export async function getApprovalDetail(opts: { db: Db; approvalId: string }) {
  const a = await opts.db.approvalRequest.findUnique({
    where: { id: opts.approvalId },
    include: {
      decidedBy: { select: { name: true, email: true } },
      artifact: { select: { id: true, name: true, kind: true, digest: true, sizeBytes: true, content: true, mediaType: true, secretFindings: true } },
      writeBack: true,
      run: {
        select: {
          id: true,
          number: true,
          title: true,
          status: true,
          actor: true,
          actorUserId: true,
          headSha: true,
          repository: { select: { id: true, fullName: true, forge: true, twoPersonRule: true, writeBackExceptions: true, botCommentsAllowed: true } },
          triggerRule: { select: { id: true, name: true } },
        },
      },
    },
  });
  if (!a) throw new AppError("NOT_FOUND", "No such approval request.");
  const maxPatch = 1024 * 1024;
  const artifact = a.artifact ? { ...a.artifact, content: a.artifact.content?.slice(0, maxPatch) ?? null, truncated: (a.artifact.content?.length ?? 0) > maxPatch } : null;
  const exceptionApplies = a.run.repository.writeBackExceptions.includes(a.action);
  // Push protection as it stands now: what was found, and whether (by whom, why) it was overridden.
  const protection = a.artifact ? pushProtectionOf(a.artifact) : null;
  const pushProtection = protection ? { ...protection, override: overrideOf(a.pushProtectionOverride) } : null;
  return { ...a, artifact, exceptionApplies, pushProtection, approveRefusal: pushProtectionRefusal(a) };
}
