import type { GrantPoolScope, TaskKind, TrustTier } from "@/server/db/generated/enums";
import type { RepositoryActor } from "@/server/domain/actor";
import { factsFrom, type Facts } from "@/server/domain/policy/facts";
import { type AdmissionSandbox, decideSandbox, type PoolSandbox, sandboxSkipReason, type SandboxAvailable } from "./sandbox-admission";

// Runner pool selection and grant/RBAC admission for one attempt. Pure: facts in, decision out.
// The caller evaluates the runner_selection policy through decide() (which stores each decision
// with its proof) and passes the two outcomes in; this module turns them into a concrete pool,
// its service accounts, and the secrets and config maps given or refused, each with a reason.
//
// The policy is data an admin can edit, so the one invariant that must never break is also
// enforced here: code from a fork, an untrusted ref or an untrusted repository runs on an
// untrusted pool, under unprivileged service accounts, with no privileged or trusted-only grant,
// whatever the stored rules say. When this guard overrides the policy it says so.

export type AdmissionServiceAccount = { name: string; namespace: string; privileged: boolean };

export type AdmissionPool = {
  id: string;
  name: string;
  trustTier: TrustTier;
  kind: "local" | "kubernetes";
  concurrency: number;
  /** Empty: every task kind. */
  allowedTaskKinds: TaskKind[];
  runtimeServiceAccount: AdmissionServiceAccount;
  runnerServiceAccount: AdmissionServiceAccount;
  /** Its sandbox settings; absent (older callers): the defaults, restricted, never unsandboxed. */
  sandbox?: PoolSandbox;
};

export type AdmissionSecretGrant = {
  id: string;
  secretName: string;
  /** null: a grant to every stack. */
  stackId: string | null;
  privileged: boolean;
  trustedPoolsOnly: boolean;
  /** named_pools: only the pools in poolIds receive it (absent: trust_tier). */
  poolScope?: GrantPoolScope;
  poolIds?: string[];
  /** Empty: every task kind. */
  taskKinds: TaskKind[];
};

export type AdmissionConfigGrant = {
  id: string;
  configMapName: string;
  stackId: string | null;
  trustedPoolsOnly: boolean;
  poolScope?: GrantPoolScope;
  poolIds?: string[];
  taskKinds: TaskKind[];
};

export type AdmissionFacts = {
  repository: { fullName: string; trustTier: TrustTier };
  /** null: unknown, which counts as a fork. */
  isFork: boolean | null;
  /** Why the code is (un)trusted, as the run recorded it (a fork's head, an unknown origin…). */
  originReason?: string | null;
  /** The ref belongs to the repository and is trusted; null: unknown (untrusted). */
  refTrusted: boolean | null;
  taskKind: TaskKind;
  stack: { id: string | null; name: string };
  /** Secret names the stack asks for (adapter env, MCP servers). */
  requestedSecrets: string[];
  requestedConfigMaps: string[];
  /** MCP servers the stack marks privileged: untrusted code is refused them, trusted code waits for a person. */
  privilegedMcpServers?: string[];
  actor: RepositoryActor;
  /** The agent: whether it starts a process (the scripted demo does not), and the hosts its stack needs. */
  agent?: { runsProcess: boolean; hosts: string[] };
  /** The forge's git hosts (trusted pools may reach them). */
  forgeHosts?: string[];
};

export type PolicyOutcome<T> = { value: T; decisionId: string | null; rule: string | null; explanation: string };

export type AdmissionInput = AdmissionFacts & {
  policy: { poolTrustTier: PolicyOutcome<TrustTier>; privilegedCredentials: PolicyOutcome<boolean> };
  pools: AdmissionPool[];
  secretGrants: AdmissionSecretGrant[];
  configGrants: AdmissionConfigGrant[];
  /** A Kubernetes cluster is configured, so `kubernetes` pools can launch. */
  kubernetesAvailable: boolean;
  /** Whether this worker can run sandboxes (absent: it cannot). */
  sandbox?: SandboxAvailable;
  /** The network the run's context bundle declares; `none` caps the pool's mode. */
  declaredNetwork?: "none" | "restricted" | "open";
  /** Attempts starting or running per pool id, to prefer the least loaded pool. */
  activeAttempts?: Record<string, number>;
};

export type Denied = { name: string; reason: string };

export type AdmissionDecision = {
  admitted: boolean;
  /** Why the attempt may not start; null when admitted. */
  refusal: string | null;
  trustTier: TrustTier;
  privilegedCredentials: boolean;
  pool: { id: string; name: string; trustTier: TrustTier; kind: "local" | "kubernetes" } | null;
  runtimeServiceAccount: AdmissionServiceAccount | null;
  runnerServiceAccount: AdmissionServiceAccount | null;
  /** The sandbox the attempt runs in: kind, network, limits (null when refused). */
  sandbox?: AdmissionSandbox | null;
  secretsGranted: { name: string; grantId: string; privileged: boolean }[];
  secretsDenied: Denied[];
  configMapsGranted: { name: string; grantId: string }[];
  configMapsDenied: Denied[];
  /** Pools not chosen, and why. */
  poolsSkipped: Denied[];
  actor: { label: string; verdict: string };
  /** Where the invariant guard overrode the stored policy (empty when it agreed). */
  overrides: string[];
  decisionIds: string[];
  summary: string;
};

/** Untrusted code: a fork (or unknown), an untrusted or unknown ref, or an untrusted repository. */
export function isUntrustedCode(facts: Pick<AdmissionFacts, "isFork" | "refTrusted" | "repository">): boolean {
  return facts.isFork !== false || facts.refTrusted !== true || facts.repository.trustTier !== "trusted";
}

/** The grants that apply to this stack for a name: stack-specific ones first, then global. */
function grantsFor<G extends { stackId: string | null }>(grants: G[], match: (g: G) => boolean, stackId: string | null): G[] {
  const own = grants.filter((g) => match(g) && stackId !== null && g.stackId === stackId);
  return own.length > 0 ? own : grants.filter((g) => match(g) && g.stackId === null);
}

/** Whether the stack asks for anything privileged: the `stack_requests_privileged` fact. */
export function stackRequestsPrivileged(facts: AdmissionFacts, grants: AdmissionSecretGrant[]): boolean {
  return facts.requestedSecrets.some((name) =>
    grantsFor(grants, (g) => g.secretName === name, facts.stack.id).some((g) => g.privileged),
  );
}

/** The facts the runner_selection policy reads, each with its provenance. */
export function runnerSelectionFacts(facts: AdmissionFacts, grants: AdmissionSecretGrant[]): Facts {
  const known: Record<string, boolean | string> = { task_kind: facts.taskKind };
  // Unknown fork status or ref trust stays absent: the policy's closed world treats it as untrusted.
  if (facts.isFork !== null) known.is_fork = facts.isFork;
  if (facts.refTrusted !== null) known.ref_trusted = facts.refTrusted && facts.repository.trustTier === "trusted";
  return {
    ...factsFrom("webhook", known),
    ...factsFrom("system", { stack_requests_privileged: stackRequestsPrivileged(facts, grants) }),
  };
}

const words = (s: string) => s.replaceAll("_", " ");
const allows = (kinds: TaskKind[], kind: TaskKind) => kinds.length === 0 || kinds.includes(kind);
/** A grant scoped to named pools reaches only those; a trust-tier grant every pool (tier checked apart). */
const reachesPool = (g: { poolScope?: GrantPoolScope; poolIds?: string[] }, poolId: string) =>
  g.poolScope !== "named_pools" || (g.poolIds ?? []).includes(poolId);

function checkActor(actor: RepositoryActor): { ok: boolean; verdict: string } {
  if (actor.kind === "automation") {
    return actor.triggerRuleId
      ? { ok: true, verdict: `${actor.label}, under a trigger rule` }
      : { ok: false, verdict: `${actor.label} acts under no trigger rule and is no person with a repository role` };
  }
  if (actor.role === "maintainer" || actor.role === "admin") return { ok: true, verdict: `${actor.label} is ${actor.role} of the repository` };
  return {
    ok: false,
    verdict: actor.role
      ? `${actor.label} is only ${actor.role} of the repository; launching an agent needs maintainer`
      : `${actor.label} has no role on the repository; launching an agent needs maintainer`,
  };
}

function choosePool(input: AdmissionInput, tier: TrustTier, privileged: boolean, untrusted: boolean) {
  const skipped: Denied[] = [];
  // A trusted run that may not hold privileged credentials prefers a pool whose accounts are
  // unprivileged; a trusted pool with a privileged account is the fallback (it then gets no
  // privileged secret, and the decision says so). Untrusted code never gets such a pool.
  const fallback = new Set<string>();
  const eligible = input.pools.filter((pool) => {
    const skip = (reason: string) => (skipped.push({ name: pool.name, reason }), false);
    if (pool.trustTier !== tier) return skip(`${pool.trustTier} pool; this run needs ${tier}`);
    if (!allows(pool.allowedTaskKinds, input.taskKind)) return skip(`does not run ${words(input.taskKind)} tasks`);
    const privilegedAccount = [pool.runtimeServiceAccount, pool.runnerServiceAccount].find((sa) => sa.privileged);
    if (privilegedAccount && (untrusted || tier === "untrusted")) {
      return skip(`its service account ${privilegedAccount.name} is privileged and untrusted code never runs under a privileged account`);
    }
    if (pool.kind === "kubernetes" && !input.kubernetesAvailable) {
      return skip("a kubernetes pool, and no cluster is configured (AIRLOCK_K8S_CONFIG)");
    }
    if (pool.concurrency < 1) return skip("its concurrency is 0");
    const noSandbox = sandboxSkipReason(input, pool);
    if (noSandbox) return skip(noSandbox);
    if (privilegedAccount && !privileged) fallback.add(pool.id);
    return true;
  });
  const load = (p: AdmissionPool) => (input.activeAttempts?.[p.id] ?? 0) / p.concurrency;
  const rank = (p: AdmissionPool) => (fallback.has(p.id) ? 1 : 0);
  eligible.sort((a, b) => rank(a) - rank(b) || load(a) - load(b) || a.name.localeCompare(b.name));
  const pool = eligible[0] ?? null;
  for (const p of eligible.slice(1)) skipped.push({ name: p.name, reason: fallback.has(p.id) ? "its service account is privileged; a better match was chosen" : "another eligible pool was chosen" });
  const note =
    pool && fallback.has(pool.id)
      ? `no ${tier} pool with unprivileged service accounts runs ${words(input.taskKind)} tasks; ${pool.name} runs under ${pool.runtimeServiceAccount.name} (privileged) without any privileged secret`
      : null;
  return { pool, skipped, note };
}

export function admit(input: AdmissionInput): AdmissionDecision {
  const untrusted = isUntrustedCode(input);
  const overrides: string[] = [];
  let tier = input.policy.poolTrustTier.value;
  let privileged = input.policy.privilegedCredentials.value;
  if (untrusted && tier !== "untrusted") {
    tier = "untrusted";
    overrides.push("the policy chose a trusted pool for untrusted code; forced onto an untrusted pool");
  }
  if (untrusted && privileged) {
    privileged = false;
    overrides.push("the policy allowed privileged credentials for untrusted code; refused");
  }
  const decisionIds = [input.policy.poolTrustTier.decisionId, input.policy.privilegedCredentials.decisionId].filter(
    (id): id is string => id !== null,
  );
  const origin = input.originReason ? ` (${input.originReason})` : "";
  const why = input.isFork !== false ? (origin ? `Untrusted code${origin}` : "Fork PR (or unknown origin)") : untrusted ? `Untrusted ref${origin}` : `Trusted ref${origin}`;
  const actor = checkActor(input.actor);
  const { pool, skipped, note } = choosePool(input, tier, privileged, untrusted);

  const base = {
    trustTier: tier,
    privilegedCredentials: privileged,
    poolsSkipped: skipped,
    actor: { label: input.actor.label, verdict: actor.verdict },
    overrides,
    decisionIds,
  };
  const refuse = (refusal: string): AdmissionDecision => ({
    ...base,
    admitted: false,
    refusal,
    pool: null,
    runtimeServiceAccount: null,
    runnerServiceAccount: null,
    sandbox: null,
    secretsGranted: [],
    secretsDenied: input.requestedSecrets.map((name) => ({ name, reason: "the attempt was not admitted" })),
    configMapsGranted: [],
    configMapsDenied: input.requestedConfigMaps.map((name) => ({ name, reason: "the attempt was not admitted" })),
    summary: `Refused: ${refusal}`,
  });
  if (!actor.ok) return refuse(actor.verdict);
  const privilegedMcp = input.privilegedMcpServers ?? [];
  if (untrusted && privilegedMcp.length > 0) {
    return refuse(`untrusted code never gets a privileged MCP server: ${privilegedMcp.join(", ")} (${why})`);
  }
  if (!pool) {
    const reasons = skipped.map((s) => `${s.name}: ${s.reason}`).join("; ");
    return refuse(`no ${tier} runner pool can run a ${words(input.taskKind)} task${reasons ? ` (${reasons})` : " (no pools)"}`);
  }

  const poolTrusted = pool.trustTier === "trusted" && !untrusted;
  const secretsGranted: AdmissionDecision["secretsGranted"] = [];
  const secretsDenied: Denied[] = [];
  for (const name of [...new Set(input.requestedSecrets)]) {
    const grants = grantsFor(input.secretGrants, (g) => g.secretName === name, input.stack.id);
    const deny = (reason: string) => secretsDenied.push({ name, reason });
    const forTask = grants.filter((g) => allows(g.taskKinds, input.taskKind));
    const usable = forTask.filter((g) => reachesPool(g, pool.id));
    const grant = usable.find((g) => (!g.privileged || (privileged && poolTrusted)) && (!g.trustedPoolsOnly || poolTrusted));
    if (grants.length === 0) deny(`no grant lets ${input.stack.name} read it`);
    else if (forTask.length === 0) deny(`granted for ${grants.flatMap((g) => g.taskKinds).map(words).join(", ")} only, not ${words(input.taskKind)}`);
    else if (usable.length === 0) deny(`granted to named pools only, not ${pool.name}`);
    else if (grant) secretsGranted.push({ name, grantId: grant.id, privileged: grant.privileged });
    else if (usable.some((g) => g.privileged) && input.isFork !== false) deny("privileged secret: fork PRs never receive privileged secrets");
    else if (usable.some((g) => g.privileged) && !poolTrusted) deny("privileged secret: untrusted code never receives privileged secrets");
    else if (usable.some((g) => g.privileged)) deny(`privileged secret: ${input.policy.privilegedCredentials.explanation}`);
    else deny("granted on trusted pools only");
  }
  const configMapsGranted: AdmissionDecision["configMapsGranted"] = [];
  const configMapsDenied: Denied[] = [];
  for (const name of [...new Set(input.requestedConfigMaps)]) {
    const grants = grantsFor(input.configGrants, (g) => g.configMapName === name, input.stack.id);
    const forTask = grants.filter((g) => allows(g.taskKinds, input.taskKind));
    const usable = forTask.filter((g) => reachesPool(g, pool.id));
    const grant = usable.find((g) => !g.trustedPoolsOnly || poolTrusted);
    if (grants.length === 0) configMapsDenied.push({ name, reason: `no grant lets ${input.stack.name} read it` });
    else if (forTask.length === 0) configMapsDenied.push({ name, reason: `not granted for ${words(input.taskKind)} tasks` });
    else if (usable.length === 0) configMapsDenied.push({ name, reason: `granted to named pools only, not ${pool.name}` });
    else if (grant) configMapsGranted.push({ name, grantId: grant.id });
    else configMapsDenied.push({ name, reason: "granted on trusted pools only" });
  }

  const sandbox = decideSandbox(input, pool, untrusted);
  const summary = [
    `${why}: ${pool.name} (${tier}) for ${words(input.taskKind)}`,
    privileged ? "privileged credentials allowed" : "no privileged credentials",
    input.policy.poolTrustTier.explanation,
    ...(note ? [note] : []),
    sandbox.summary,
    ...overrides,
    ...sandbox.overrides,
  ].join("; ");
  return {
    ...base,
    admitted: true,
    refusal: null,
    pool: { id: pool.id, name: pool.name, trustTier: pool.trustTier, kind: pool.kind },
    runtimeServiceAccount: pool.runtimeServiceAccount,
    runnerServiceAccount: pool.runnerServiceAccount,
    sandbox: sandbox.decision,
    overrides: [...overrides, ...sandbox.overrides],
    secretsGranted,
    secretsDenied,
    configMapsGranted,
    configMapsDenied,
    summary,
  };
}

/** The `admission` run event payload (also the core of AgentDispatchRun.admission). */
export function admissionEventPayload(d: AdmissionDecision) {
  return {
    admitted: d.admitted,
    poolName: d.pool?.name ?? null,
    trustTier: d.pool ? d.trustTier : null,
    runtimeServiceAccount: d.runtimeServiceAccount?.name ?? null,
    runnerServiceAccount: d.runnerServiceAccount?.name ?? null,
    secretsGranted: d.secretsGranted.map((s) => s.name),
    secretsDenied: d.secretsDenied,
    configMapsGranted: d.configMapsGranted.map((c) => c.name),
    ...(d.decisionIds[0] ? { policyDecisionId: d.decisionIds[0] } : {}),
    summary: (d.refusal ? `Refused: ${d.refusal}` : d.summary).slice(0, 2000),
  };
}
