import type { Prisma } from "@/server/db";
import type { buildContext } from "./context";
import type { Admission, PoolIds } from "./pools";
import type { RunPlan } from "./run-plan";
import type { snapshotOf } from "./stacks";
import type { DemoUserKey } from "./users";

// What building one seeded run takes and gives, shared by build-run.ts and write-backs.ts.

export type BuildInput = {
  plan: RunPlan;
  /** The run's columns that do not depend on how it played out. */
  base: Omit<Prisma.AgentDispatchRunCreateManyInput, "id" | "title" | "source" | "taskKind" | "actor" | "actorUserId" | "status" | "isFork" | "parentRunId">;
  runId: string;
  parentRunId: string | null;
  createdAt: Date;
  now: Date;
  dedupeKey: string;
  context: ReturnType<typeof buildContext>;
  snapshot: ReturnType<typeof snapshotOf>;
  /** What admission granted, for a run that got past the queue. */
  admission: Admission | null;
  ids: { users: Record<DemoUserKey, string>; pools: PoolIds; ruleId: string | null; deliveryIds: Map<string, string> };
};

export type BuiltRun = {
  run: Prisma.AgentDispatchRunCreateManyInput;
  attempts: Prisma.DispatchAttemptCreateManyInput[];
  events: Prisma.RunEventCreateManyInput[];
  artifacts: Prisma.ArtifactCreateManyInput[];
  approvals: Prisma.ApprovalRequestCreateManyInput[];
  writeBacks: Prisma.WriteBackCreateManyInput[];
  drops: Prisma.TriggerDropCreateManyInput[];
  audit: Prisma.AuditEntryCreateManyInput[];
};
