import type { RunSource, RunStatus, TaskKind, WriteBackKind } from "@/server/db";
import type { ReportCase } from "./cases/reports";
import type { AgentCase } from "./cases/types";
import type { PoolName } from "./pools";
import type { RepoName } from "./repos";
import type { StackName } from "./stacks";
import type { RuleName } from "./triggers";
import type { DemoUserKey } from "./users";

// The shape of one seeded run: where it came from, what the agent did, how its
// attempts ended and what became of its write-backs. runs.ts turns a plan into
// rows; the data is in run-plans-*.ts.

// Only settled outcomes: a seeded attempt left queued or running would be claimed or reaped by
// the worker and fail (its session is a recording, not a process).
export type AttemptPlan = {
  outcome: "succeeded" | "failed" | "lost" | "timed_out" | "cancelled";
  /** The attempt's exit reason (required for failed, lost, timed_out, cancelled). */
  reason?: string;
  /** How many beats of the session were played before it stopped (partial outcomes). */
  beats?: number;
  /** Minutes spent waiting in the queue before a worker picked the attempt. */
  queueMin?: number;
};

export type Decision =
  | { status: "pending" }
  | { status: "executed"; by: DemoUserKey; afterMin: number; externalRef: string; followUp?: string }
  | { status: "failed"; by: DemoUserKey; afterMin: number; error: string }
  | { status: "rejected"; by: DemoUserKey; afterMin: number; reason: string }
  | { status: "expired"; afterMin: number };

export type WriteBackPlan = {
  action: WriteBackKind;
  artifact?: "patch" | "diagnosis" | "report";
  /** exempt: a write-back kind the repository admin exempted; it runs without approval. */
  gate: { exempt: true; externalRef: string } | { exempt: false; decision: Decision; expiresAfterH?: number; why: string };
};

export type RunPlan = {
  key: string;
  title: string;
  repo: RepoName;
  pr?: number;
  pipeline?: string;
  headSha?: string;
  headBranch?: string;
  tag?: string;
  source: RunSource;
  sourceDetail: string;
  taskKind: TaskKind;
  rule?: RuleName;
  delivery?: string;
  actor: { user: DemoUserKey } | { login: string; kind: "bot" | "system" | "user" };
  stack: StackName;
  stackVersion?: number;
  pool?: PoolName;
  isFork?: boolean;
  ageMin: number;
  parent?: string;
  content: { case: AgentCase; task: "diagnose" | "repair" | "give_up" } | { report: ReportCase };
  scan?: { window: string; signatures: string[] };
  /** How the run began, and for a suggestion what a person did with it. */
  start:
    | { as: "queued"; reason: string }
    | { as: "suggested"; reason: string; then?: { dispatchedBy: DemoUserKey | "policy"; afterMin: number } | { dismissedBy: DemoUserKey; afterMin: number; reason: string } };
  attempts: AttemptPlan[];
  writeBacks?: WriteBackPlan[];
  /** Set when the run ends escalated by the agent rather than by approvals. */
  escalation?: string;
  /** A person cancelling the run (when an attempt ends cancelled). */
  cancelledBy?: DemoUserKey;
  /** Redeliveries / re-requests dropped as duplicates of this run: minutes after creation. */
  drops?: { delivery: string; afterMin: number; reason: string }[];
  end: RunStatus;
};
