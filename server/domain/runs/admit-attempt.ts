import type { Db, Prisma, Tx } from "@/server/db";
import type { RepoRole, TaskKind, TrustTier } from "@/server/db/generated/enums";
import {
  admit,
  admissionEventPayload,
  type AdmissionDecision,
  type AdmissionFacts,
  type PolicyOutcome,
  runnerSelectionFacts,
} from "../pools/admission";
import { decide } from "../policy/decide";
import { PolicyFactError } from "../policy/facts";
import { type StackSpec, zStackSpec } from "../stacks/spec";

// Admission's inputs and its policy decisions: the run's facts, the actor's repository role,
// pools with their service accounts, grants, and the runner_selection policy decided through
// decide() (each decision stored with its proof). The pure choice is server/domain/pools/admission.ts.

export type AdmissionRun = {
  id: string;
  repositoryId: string;
  taskKind: AdmissionFacts["taskKind"];
  isFork: boolean;
  actor: string;
  actorUserId: string | null;
  triggerRuleId: string | null;
  stackId: string | null;
  stackSnapshot: Prisma.JsonValue;
  repository: { fullName: string; trustTier: TrustTier };
};

/** What AgentDispatchRun.admission holds: the event payload plus the full decision. */
export type StoredAdmission = ReturnType<typeof admissionEventPayload> & {
  attemptId: string;
  attemptNumber: number;
  decidedAt: string;
  decision: AdmissionDecision;
};

export function stackSpecOf(snapshot: Prisma.JsonValue): { name: string; spec: StackSpec } | null {
  const s = snapshot as { name?: unknown; spec?: unknown } | null;
  const parsed = zStackSpec.safeParse(s?.spec);
  return parsed.success ? { name: typeof s?.name === "string" ? s.name : "stack", spec: parsed.data } : null;
}

/** Secret and config map names a stack asks for: its adapter's env and its MCP servers'. */
export function requestedGrants(spec: StackSpec): { secrets: string[]; configMaps: string[] } {
  const secrets = [...(spec.adapter.kind === "command" ? spec.adapter.env : []), ...spec.mcpServers.flatMap((m) => m.secrets)];
  return { secrets: [...new Set(secrets)], configMaps: [...new Set(spec.mcpServers.flatMap((m) => m.configMaps))] };
}

type PoolRow = {
  id: string;
  name: string;
  trustTier: TrustTier;
  kind: "local" | "kubernetes";
  concurrency: number;
  allowedTaskKinds: TaskKind[];
  rtName: string;
  rtNamespace: string;
  rtPrivileged: boolean;
  rnName: string;
  rnNamespace: string;
  rnPrivileged: boolean;
  active: number;
};

async function actorOf(db: Db, run: AdmissionRun): Promise<AdmissionFacts["actor"]> {
  if (!run.actorUserId) return { kind: "automation", label: run.actor, triggerRuleId: run.triggerRuleId };
  const user = await db.user.findUnique({
    where: { id: run.actorUserId },
    select: { email: true, isAdmin: true, memberships: { where: { repositoryId: run.repositoryId }, select: { role: true } } },
  });
  const role: RepoRole | null = user?.isAdmin ? "admin" : (user?.memberships[0]?.role ?? null);
  return { kind: "person", label: user?.email ?? run.actor, role };
}

async function decideOutcome<T>(tx: Tx, runId: string, subject: string, facts: ReturnType<typeof runnerSelectionFacts>, property: string, fallback: T) {
  try {
    const made = await decide({ db: tx, kind: "runner_selection", facts, property, runId, subject });
    return { value: made.decision.value as T, decisionId: made.id, rule: made.decision.rule, explanation: made.decision.explanation } satisfies PolicyOutcome<T>;
  } catch (err) {
    // Facts the policy refuses are no decision: fail closed (untrusted, unprivileged) and say why.
    if (!(err instanceof PolicyFactError)) throw err;
    return { value: fallback, decisionId: null, rule: null, explanation: `the policy refused the facts (${err.message}); fail-closed` };
  }
}

export type AdmissionInputs = Awaited<ReturnType<typeof loadAdmissionInputs>>;

/**
 * Everything admission reads besides the policy: the run's facts, the actor's role, pools with
 * their accounts and load, the grants for what the stack asks. Read-only and independent of the
 * run's lock, so the claim loads it before its transaction, with the reads in parallel.
 */
export async function loadAdmissionInputs(db: Db, run: AdmissionRun) {
  const stack = stackSpecOf(run.stackSnapshot);
  const requested = stack ? requestedGrants(stack.spec) : { secrets: [], configMaps: [] };
  const [actor, pools, secretGrants, configGrants] = await Promise.all([
    actorOf(db, run),
    // Pools with their accounts and current load in one query.
    db.$queryRaw<PoolRow[]>`
      SELECT p."id", p."name", p."trustTier"::text AS "trustTier", p."kind"::text AS "kind", p."concurrency",
             p."allowedTaskKinds"::text[] AS "allowedTaskKinds",
             rt."name" AS "rtName", rt."namespace" AS "rtNamespace", rt."privileged" AS "rtPrivileged",
             rn."name" AS "rnName", rn."namespace" AS "rnNamespace", rn."privileged" AS "rnPrivileged",
             (SELECT count(*)::int FROM "DispatchAttempt" a WHERE a."runnerPoolId" = p."id" AND a."status" IN ('starting', 'running')) AS "active"
      FROM "RunnerPool" p
      JOIN "ServiceAccount" rt ON rt."id" = p."runtimeServiceAccountId"
      JOIN "ServiceAccount" rn ON rn."id" = p."runnerServiceAccountId"
      ORDER BY p."name"`,
    requested.secrets.length > 0 ? db.secretGrant.findMany({ where: { secretName: { in: requested.secrets } } }) : [],
    requested.configMaps.length > 0 ? db.configGrant.findMany({ where: { configMapName: { in: requested.configMaps } } }) : [],
  ]);
  const facts: AdmissionFacts = {
    repository: run.repository,
    isFork: run.isFork,
    refTrusted: !run.isFork && run.repository.trustTier === "trusted",
    taskKind: run.taskKind,
    stack: { id: run.stackId, name: stack?.name ?? "unknown stack" },
    requestedSecrets: requested.secrets,
    requestedConfigMaps: requested.configMaps,
    actor,
  };
  return { facts, hasStack: stack !== null, pools, secretGrants, configGrants };
}

/**
 * Decides the admission of `attempt` from its loaded inputs: the runner_selection policy through
 * decide() (both decisions stored with their proofs, in the caller's transaction), then the pure
 * choice. Stores nothing else.
 */
export async function decideAdmission(
  tx: Tx,
  opts: { runId: string; attemptId: string; inputs: AdmissionInputs; kubernetesAvailable: boolean },
): Promise<AdmissionDecision> {
  const { facts, pools, secretGrants, configGrants } = opts.inputs;
  const policyFacts = runnerSelectionFacts(facts, secretGrants);
  const subject = `attempt:${opts.attemptId}`;
  const poolTrustTier = await decideOutcome<TrustTier>(tx, opts.runId, subject, policyFacts, "pool_trust_tier", "untrusted");
  const privilegedCredentials = await decideOutcome<boolean>(tx, opts.runId, subject, policyFacts, "privileged_credentials", false);
  const decision = admit({
    ...facts,
    policy: { poolTrustTier, privilegedCredentials },
    pools: pools.map((p) => ({
      id: p.id,
      name: p.name,
      trustTier: p.trustTier,
      kind: p.kind,
      concurrency: p.concurrency,
      allowedTaskKinds: p.allowedTaskKinds,
      runtimeServiceAccount: { name: p.rtName, namespace: p.rtNamespace, privileged: p.rtPrivileged },
      runnerServiceAccount: { name: p.rnName, namespace: p.rnNamespace, privileged: p.rnPrivileged },
    })),
    secretGrants,
    configGrants,
    kubernetesAvailable: opts.kubernetesAvailable,
    activeAttempts: Object.fromEntries(pools.map((p) => [p.id, p.active])),
  });
  if (!opts.inputs.hasStack && decision.admitted) {
    const refusal = "the run's stack snapshot has no valid stack definition";
    return {
      ...decision,
      admitted: false,
      refusal,
      pool: null,
      runtimeServiceAccount: null,
      runnerServiceAccount: null,
      secretsGranted: [],
      configMapsGranted: [],
      summary: `Refused: ${refusal}`,
    };
  }
  return decision;
}

export function storedAdmission(decision: AdmissionDecision, attempt: { id: string; number: number }, now: Date): StoredAdmission {
  return { ...admissionEventPayload(decision), attemptId: attempt.id, attemptNumber: attempt.number, decidedAt: now.toISOString(), decision };
}

/** The stored admission of this attempt, if it was already decided (a claim that waited for capacity). */
export function admissionFor(stored: Prisma.JsonValue, attemptId: string): AdmissionDecision | null {
  const s = stored as Partial<StoredAdmission> | null;
  return s && s.attemptId === attemptId && s.decision ? s.decision : null;
}
