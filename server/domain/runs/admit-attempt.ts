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
import { type CurrentPolicy, type PreparedDecision, prepareDecision, storeDecisions } from "../policy/decide";
import { PolicyFactError } from "../policy/fact-check";
import { type StackSpec, zStackSpec } from "../stacks/spec";
import type { SandboxAvailable } from "../pools/sandbox-admission";
import { checkModelKey, type GrantHasValue } from "./model-key-admission";
import { modelProviderHosts, type NetworkMode } from "@/server/execution/sandbox/policy";

// Admission's inputs and its policy decisions: the run's facts, the actor's repository role,
// pools with their service accounts, grants, and the runner_selection policy (each decision
// stored with its proof). The pure choice is server/domain/pools/admission.ts.
//
// Split for a short claim transaction: everything is read and evaluated before it
// (planAdmission), and only the two policy decisions are stored inside it, in one statement,
// before the attempt may start (storeAdmissionDecisions).

export type AdmissionRun = {
  id: string;
  repositoryId: string;
  taskKind: AdmissionFacts["taskKind"];
  isFork: boolean;
  /** Why the code is (un)trusted (evaluation/origin.ts); null on older runs. */
  originReason?: string | null;
  actor: string;
  actorUserId: string | null;
  triggerRuleId: string | null;
  stackId: string | null;
  stackSnapshot: Prisma.JsonValue;
  repository: { fullName: string; trustTier: TrustTier; forge?: string; cloneUrl?: string };
  contextBundle?: Prisma.JsonValue;
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
  const a = spec.adapter;
  const own = a.kind === "command" ? { secrets: a.env, configMaps: [] } : a.kind === "claude-code" ? { secrets: [a.apiKeySecret], configMaps: a.baseUrlConfigMap ? [a.baseUrlConfigMap] : [] } : { secrets: [], configMaps: [] };
  const secrets = [...own.secrets, ...spec.mcpServers.flatMap((m) => m.secrets)];
  return { secrets: [...new Set(secrets)], configMaps: [...new Set([...own.configMaps, ...spec.mcpServers.flatMap((m) => m.configMaps)])] };
}

export type PoolRow = {
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
  networkMode: NetworkMode;
  allowedHosts: string[];
  memoryLimitMb: number;
  processLimit: number;
  cpuLimitSeconds: number;
  diskLimitMb: number;
  allowUnsandboxed: boolean;
  active: number;
};

async function actorOf(db: Db, run: AdmissionRun): Promise<AdmissionFacts["actor"]> {
  if (!run.actorUserId) return { kind: "automation", label: run.actor, triggerRuleId: run.triggerRuleId };
  // The user and their role on this repository in one round trip.
  const [user] = await db.$queryRaw<{ email: string; isAdmin: boolean; role: RepoRole | null }[]>`
    SELECT u."email", u."isAdmin",
           (SELECT m."role"::text FROM "Membership" m WHERE m."userId" = u."id" AND m."repositoryId" = ${run.repositoryId}) AS "role"
    FROM "User" u WHERE u."id" = ${run.actorUserId}`;
  const role: RepoRole | null = user?.isAdmin ? "admin" : (user?.role ?? null);
  return { kind: "person", userId: run.actorUserId, label: user?.email ?? run.actor, role };
}

/** Pools with their accounts and current load, in one query. Independent of the run. */
export function loadPools(db: Db): Promise<PoolRow[]> {
  return db.$queryRaw<PoolRow[]>`
    SELECT p."id", p."name", p."trustTier"::text AS "trustTier", p."kind"::text AS "kind", p."concurrency",
           p."allowedTaskKinds"::text[] AS "allowedTaskKinds",
           rt."name" AS "rtName", rt."namespace" AS "rtNamespace", rt."privileged" AS "rtPrivileged",
           rn."name" AS "rnName", rn."namespace" AS "rnNamespace", rn."privileged" AS "rnPrivileged",
           p."networkMode"::text AS "networkMode", coalesce(p."allowedHosts", '{}') AS "allowedHosts", p."memoryLimitMb",
           p."processLimit", p."cpuLimitSeconds", p."diskLimitMb", p."allowUnsandboxed",
           (SELECT count(*)::int FROM "DispatchAttempt" a WHERE a."runnerPoolId" = p."id" AND a."status" IN ('starting', 'running')) AS "active"
    FROM "RunnerPool" p
    JOIN "ServiceAccount" rt ON rt."id" = p."runtimeServiceAccountId"
    JOIN "ServiceAccount" rn ON rn."id" = p."runnerServiceAccountId"
    ORDER BY p."name"`;
}

/** One runner_selection property, prepared (not stored); refused facts fail closed with no decision. */
function outcomeOf<T>(policy: CurrentPolicy, facts: ReturnType<typeof runnerSelectionFacts>, property: string, fallback: T) {
  try {
    const prepared = prepareDecision(policy, facts, property);
    const { value, rule, explanation } = prepared.decision;
    return { prepared, outcome: { value: value as T, decisionId: null, rule, explanation } satisfies PolicyOutcome<T> };
  } catch (err) {
    // Facts the policy refuses are no decision: fail closed (untrusted, unprivileged) and say why.
    if (!(err instanceof PolicyFactError)) throw err;
    const outcome: PolicyOutcome<T> = { value: fallback, decisionId: null, rule: null, explanation: `the policy refused the facts (${err.message}); fail-closed` };
    return { prepared: null, outcome };
  }
}

export type AdmissionInputs = Awaited<ReturnType<typeof loadAdmissionInputs>>;

/**
 * Everything admission reads besides the policy: the run's facts, the actor's role, pools with
 * their accounts and load, the grants for what the stack asks. Read-only and independent of the
 * run's lock, so the claim loads it before its transaction, with the reads in parallel (pools may
 * be passed in, read alongside the run).
 */
export async function loadAdmissionInputs(db: Db, run: AdmissionRun, preloaded: { pools?: Promise<PoolRow[]> | PoolRow[] } = {}) {
  const stack = stackSpecOf(run.stackSnapshot);
  const requested = stack ? requestedGrants(stack.spec) : { secrets: [], configMaps: [] };
  const [actor, pools, secretGrants, configGrants] = await Promise.all([
    actorOf(db, run),
    preloaded.pools ?? loadPools(db),
    requested.secrets.length > 0 ? db.secretGrant.findMany({ where: { secretName: { in: requested.secrets } } }) : [],
    requested.configMaps.length > 0 ? db.configGrant.findMany({ where: { configMapName: { in: requested.configMaps } } }) : [],
  ]);
  const facts: AdmissionFacts = {
    repository: run.repository,
    isFork: run.isFork,
    originReason: run.originReason ?? null,
    refTrusted: !run.isFork && run.repository.trustTier === "trusted",
    taskKind: run.taskKind,
    stack: { id: run.stackId, name: stack?.name ?? "unknown stack" },
    requestedSecrets: requested.secrets,
    requestedConfigMaps: requested.configMaps,
    privilegedMcpServers: (stack?.spec.mcpServers ?? []).filter((m) => m.privileged).map((m) => m.name),
    actor,
    agent: { runsProcess: stack?.spec.adapter.kind !== "scripted", hosts: stack ? (modelProviderHosts[stack.spec.modelProvider] ?? []) : [] },
    forgeHosts: forgeHostsOf(run.repository),
  };
  return { facts, declaredNetwork: declaredNetworkOf(run.contextBundle), hasStack: stack !== null, spec: stack?.spec ?? null, pools, secretGrants, configGrants };
}

/** The git host of a remote forge (a local forge is on disk: none). */
function forgeHostsOf(repo: AdmissionRun["repository"]): string[] {
  if (repo.forge !== "github" || !repo.cloneUrl) return [];
  try {
    return [new URL(repo.cloneUrl).host.toLowerCase()];
  } catch {
    return [];
  }
}

/** The network the run's context bundle declares (policy.network). */
function declaredNetworkOf(bundle: Prisma.JsonValue | undefined): NetworkMode | undefined {
  const n = (bundle as { policy?: { network?: unknown } } | null | undefined)?.policy?.network;
  return n === "none" || n === "restricted" || n === "open" ? n : undefined;
}

/** An admission decided but not yet stored: the choice, and the policy decisions it rests on. */
export type AdmissionPlan = { decision: AdmissionDecision; policyDecisions: PreparedDecision[] };

/**
 * Decides admission from its loaded inputs and the current runner_selection policy: the two
 * policy properties evaluated (prepared, not stored), then the pure choice. Reads and writes
 * nothing; storeAdmissionDecisions stores the policy decisions before anything may launch.
 */
export function planAdmission(opts: { inputs: AdmissionInputs; policy: CurrentPolicy; kubernetesAvailable: boolean; sandbox?: SandboxAvailable; hasValue?: GrantHasValue }): AdmissionPlan {
  const { facts, pools, secretGrants, configGrants } = opts.inputs;
  const policyFacts = runnerSelectionFacts(facts, secretGrants);
  const poolTrustTier = outcomeOf<TrustTier>(opts.policy, policyFacts, "pool_trust_tier", "untrusted");
  const privilegedCredentials = outcomeOf<boolean>(opts.policy, policyFacts, "privileged_credentials", false);
  const policyDecisions = [poolTrustTier.prepared, privilegedCredentials.prepared].filter((d): d is PreparedDecision => d !== null);
  const admitted = admit({
    ...facts,
    policy: { poolTrustTier: poolTrustTier.outcome, privilegedCredentials: privilegedCredentials.outcome },
    pools: pools.map((p) => ({
      id: p.id,
      name: p.name,
      trustTier: p.trustTier,
      kind: p.kind,
      concurrency: p.concurrency,
      allowedTaskKinds: p.allowedTaskKinds,
      runtimeServiceAccount: { name: p.rtName, namespace: p.rtNamespace, privileged: p.rtPrivileged },
      runnerServiceAccount: { name: p.rnName, namespace: p.rnNamespace, privileged: p.rnPrivileged },
      sandbox: {
        networkMode: p.networkMode,
        allowedHosts: p.allowedHosts,
        limits: { memoryMb: p.memoryLimitMb, processes: p.processLimit, cpuSeconds: p.cpuLimitSeconds, diskMb: p.diskLimitMb },
        allowUnsandboxed: p.allowUnsandboxed,
      },
    })),
    secretGrants,
    configGrants,
    kubernetesAvailable: opts.kubernetesAvailable,
    sandbox: opts.sandbox,
    declaredNetwork: opts.inputs.declaredNetwork,
    activeAttempts: Object.fromEntries(pools.map((p) => [p.id, p.active])),
  });
  // A Claude Code stack without its model API key (not granted, no value, a fork PR's run) is refused here.
  const decision = checkModelKey({ decision: admitted, spec: opts.inputs.spec, isFork: facts.isFork, stackName: facts.stack.name, hasValue: opts.hasValue });
  if (!opts.inputs.hasStack && decision.admitted) {
    const refusal = "the run's stack snapshot has no valid stack definition";
    return {
      policyDecisions,
      decision: {
        ...decision,
        admitted: false,
        refusal,
        pool: null,
        runtimeServiceAccount: null,
        runnerServiceAccount: null,
        secretsGranted: [],
        configMapsGranted: [],
        summary: `Refused: ${refusal}`,
      },
    };
  }
  return { decision, policyDecisions };
}

/**
 * Stores the plan's policy decisions for `attempt:<id>` (one statement, in the caller's
 * transaction) and returns the admission naming them: the proof exists before the attempt starts
 * and is rolled back with the claim if the claim does not commit.
 */
export async function storeAdmissionDecisions(tx: Tx, opts: { runId: string; attemptId: string; plan: AdmissionPlan }): Promise<AdmissionDecision> {
  const subject = `attempt:${opts.attemptId}`;
  const stored = await storeDecisions(
    tx,
    opts.plan.policyDecisions.map((prepared) => ({ prepared, runId: opts.runId, subject })),
  );
  return { ...opts.plan.decision, decisionIds: stored.map((d) => d.id) };
}

export function storedAdmission(decision: AdmissionDecision, attempt: { id: string; number: number }, now: Date): StoredAdmission {
  return { ...admissionEventPayload(decision), attemptId: attempt.id, attemptNumber: attempt.number, decidedAt: now.toISOString(), decision };
}

/** The stored admission of this attempt, if it was already decided (a claim that waited for capacity). */
export function admissionFor(stored: Prisma.JsonValue, attemptId: string): AdmissionDecision | null {
  const s = stored as Partial<StoredAdmission> | null;
  return s && s.attemptId === attemptId && s.decision ? s.decision : null;
}
