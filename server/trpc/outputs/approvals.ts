import { z } from "zod";
import { ApprovalStatus, ArtifactKind, ForgeKind, RepoRole, RunStatus, WriteBackKind } from "@/server/db/generated/enums";
import { zPresented } from "@/server/domain/approvals/schemas";
import { zRedactionEntry } from "@/server/domain/context/redaction/report";
import { storedJson } from "./stored-json";
import { zWriteBackRow } from "./write-backs";

// What the approvals queue and the decisions send to the browser (server/domain/approvals/):
// the queue's rows without the presented JSON (only the stack's name is read off it), and the
// ids a decision made; one request as its approver reviews it, its presented JSON parsed with
// zPresented here, so a stored record of another shape fails the procedure (an error the page
// shows) instead of reaching the page unchecked.

export const zPerson = z.object({ name: z.string(), email: z.string() });

/** What a request asks and where it stands: the fields the queue's rows and a request share. */
const zApprovalBase = {
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
};

export const zApprovalList = z.array(
  z.object({
    ...zApprovalBase,
    decidedBy: zPerson.nullable(),
    run: z.object({ id: z.string(), number: z.number().int(), title: z.string(), status: z.enum(RunStatus), repository: z.object({ id: z.string(), fullName: z.string() }) }),
    stackName: z.string().nullable(),
    expired: z.boolean(),
  }),
);

/** An approval request's own columns (its presented JSON apart). */
export const zApprovalRow = {
  ...zApprovalBase,
  runId: z.string(),
  artifactId: z.string().nullable(),
  policyDecisionId: z.string().nullable(),
  decidedById: z.string().nullable(),
};
const zPushProtectionOverride = z.object({ byUserId: z.string(), by: z.string(), at: z.string(), reason: z.string() });

export const zApprovalDetail = z.object({
  ...zApprovalRow,
  presented: storedJson(zPresented),
  decidedBy: zPerson.nullable(),
  run: z.object({
    id: z.string(),
    number: z.number().int(),
    title: z.string(),
    status: z.enum(RunStatus),
    actor: z.string(),
    actorUserId: z.string().nullable(),
    headSha: z.string(),
    repository: z.object({ id: z.string(), fullName: z.string(), forge: z.enum(ForgeKind), botCommentsAllowed: z.boolean(), twoPersonRule: z.boolean(), writeBackExceptions: z.array(z.enum(WriteBackKind)) }),
    triggerRule: z.object({ id: z.string(), name: z.string() }).nullable(),
  }),
  artifact: z
    .object({ id: z.string(), name: z.string(), kind: z.enum(ArtifactKind), digest: z.string(), sizeBytes: z.number().int(), mediaType: z.string(), content: z.string().nullable(), truncated: z.boolean() })
    .nullable(),
  writeBack: zWriteBackRow.nullable(),
  exceptionApplies: z.boolean(),
  pushProtection: z.object({ findings: z.array(zRedactionEntry), note: z.string(), override: zPushProtectionOverride.nullable() }).nullable(),
  approveRefusal: z.string().nullable(),
  viewerRole: z.enum(RepoRole),
  viewerTwoPersonRefusal: z.string().nullable(),
});

export const zApprovalCounts = z.object(Object.fromEntries(Object.values(ApprovalStatus).map((s) => [s, z.number().int()])) as Record<ApprovalStatus, z.ZodNumber>);

export const zApproved = z.object({ approvalId: z.string(), writeBackId: z.string().nullable() });
export const zRejected = z.object({ approvalId: z.string() });
export const zPushProtectionOverridden = z.object({
  approvalId: z.string(),
  override: zPushProtectionOverride,
});
