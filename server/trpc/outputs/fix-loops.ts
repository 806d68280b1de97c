import { z } from "zod";
import { ApprovalStatus, FixSpawnKind, FixSpawnOutcome, RunStatus } from "@/server/db/generated/enums";
import { zRepositoryRef } from "./repositories";
import { zRunRef } from "./shared";

// The fix-forward loop of a branch as the run and branch views show it (server/domain/fixloop/presenter.ts).

export const zFixLoop = z.object({
  repository: zRepositoryRef,
  branch: z.string(),
  pullRequest: z.object({ id: z.string(), number: z.number().int(), title: z.string(), labels: z.array(z.string()), url: z.string().nullable() }).nullable(),
  bound: z.number().int(),
  used: z.number().int(),
  labels: z.object({ agent: z.string(), human: z.string() }),
  escalatedAt: z.date().nullable(),
  escalationDigest: z.string().nullable(),
  labelFlip: z
    .object({
      approvalId: z.string(),
      status: z.enum(ApprovalStatus),
      change: z.object({ prNumber: z.number().int().nullable(), add: z.array(z.string()), remove: z.array(z.string()) }).nullable(),
    })
    .nullable(),
  resetAt: z.date().nullable(),
  resetBy: z.string().nullable(),
  deferred: z
    .object({ by: z.string(), text: z.string(), at: z.date(), behind: z.object({ id: z.string(), number: z.number().int(), status: z.enum(RunStatus) }).nullable() })
    .nullable(),
  rounds: z.array(
    z.object({
      id: z.string(),
      kind: z.enum(FixSpawnKind),
      createdAt: z.date(),
      rejectedBy: z.string(),
      rejection: z.string(),
      outcome: z.enum(FixSpawnOutcome),
      error: z.string().nullable(),
      counted: z.boolean(),
      run: zRunRef.nullable(),
      parent: zRunRef.nullable(),
    }),
  ),
  attributions: z.array(z.object({ check: z.string(), decisionId: z.string(), value: z.string(), rule: z.string().nullable(), decidedAt: z.date(), runId: z.string().nullable() })),
});
