import { z } from "zod";
import { RepoRole, RunStatus, TaskKind, TriageActionKind, TriageActionStatus, TriageDisposition } from "@/server/db/generated/enums";
import { storedEnum } from "./stored-json";
import { zStackOption } from "./stacks";

// What the runs list and the run page read (server/domain/runs/).

export const zRunCounts = z.object(Object.fromEntries(Object.values(RunStatus).map((s) => [s, z.number().int()])) as Record<RunStatus, z.ZodNumber>);

export const zRunFilterOptions = z.object({ stacks: z.array(z.object({ id: z.string(), name: z.string() })), actors: z.array(z.string()) });

export const zEventSearch = z.object({ seqs: z.array(z.number().int()), truncated: z.boolean() });

export const zCancelled = z.object({ runId: z.string(), from: z.enum(RunStatus), attemptsCancelled: z.number().int(), approvalsWithdrawn: z.number().int() });

/** A task kind's stack when a person asks for one (server/domain/triggers/task-stacks.ts), or why there is none. */
const zTaskStack = z.union([
  z.object({ taskKind: z.enum(TaskKind), stack: zStackOption, rule: z.object({ id: z.string(), name: z.string(), scope: z.enum(["repository", "global"]) }), reason: z.null() }),
  z.object({ taskKind: z.enum(TaskKind), stack: z.null(), rule: z.null(), reason: z.string() }),
]);

export const zDispatchOptions = z.object({
  repository: z.object({ id: z.string(), fullName: z.string(), defaultBranch: z.string() }),
  role: z.enum(RepoRole),
  refusal: z.string().nullable(),
  stacks: z.array(zStackOption),
  taskStacks: z.array(zTaskStack),
  /** The heading the prompt puts above a manual dispatch's instructions, shown in the dialog as the agent gets it. */
  instructionsHeading: z.string(),
});

/** The triage decision behind a run (server/domain/triage/presenter.ts), or null when none was made. */
export const zRunTriage = z
  .object({
    id: z.string(),
    disposition: storedEnum(TriageDisposition),
    action: storedEnum(TriageActionKind),
    actionStatus: storedEnum(TriageActionStatus),
    actionDetail: z.string(),
    refusal: z.string().nullable(),
    policyDecisionId: z.string().nullable(),
    headSha: z.string(),
    checkName: z.string(),
    createdAt: z.date(),
  })
  .nullable();
