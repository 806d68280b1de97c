import { z } from "zod";
import { ApprovalStatus, RunStatus, WriteBackKind } from "@/server/db/generated/enums";

// What the approvals queue and the decisions send to the browser (server/domain/approvals/):
// the queue's rows without the presented JSON (only the stack's name is read off it), and the
// ids a decision made. `byId` is not declared yet: its presented JSON takes a new shape with
// each write-back kind #19 adds, so its schema comes after those land.

const zPerson = z.object({ name: z.string(), email: z.string() });

export const zApprovalList = z.array(
  z.object({
    id: z.string(),
    action: z.enum(WriteBackKind),
    status: z.enum(ApprovalStatus),
    targetBranch: z.string().nullable(),
    targetPrNumber: z.number().int().nullable(),
    targetCheck: z.string().nullable(),
    targetHeadSha: z.string().nullable(),
    artifactDigest: z.string().nullable(),
    createdAt: z.date(),
    expiresAt: z.date(),
    decidedAt: z.date().nullable(),
    reason: z.string().nullable(),
    decidedBy: zPerson.nullable(),
    run: z.object({ id: z.string(), number: z.number().int(), title: z.string(), status: z.enum(RunStatus), repository: z.object({ id: z.string(), fullName: z.string() }) }),
    stackName: z.string().nullable(),
    expired: z.boolean(),
  }),
);

export const zApprovalCounts = z.object(Object.fromEntries(Object.values(ApprovalStatus).map((s) => [s, z.number().int()])) as Record<ApprovalStatus, z.ZodNumber>);

export const zApproved = z.object({ approvalId: z.string(), writeBackId: z.string().nullable() });
export const zRejected = z.object({ approvalId: z.string() });
export const zPushProtectionOverridden = z.object({
  approvalId: z.string(),
  override: z.object({ byUserId: z.string(), by: z.string(), at: z.string(), reason: z.string() }),
});
