import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { TaskKind, TrustTier } from "@/server/db/generated/enums";
import { evaluate } from "@/server/domain/policy/evaluate";
import { runnerSelectionPolicy } from "@/server/domain/policy/shipped";
import {
  admit,
  admissionEventPayload,
  type AdmissionConfigGrant,
  type AdmissionFacts,
  type AdmissionInput,
  type AdmissionPool,
  type AdmissionSecretGrant,
  isUntrustedCode,
  runnerSelectionFacts,
} from "./admission";
import { zAdmissionPayload } from "@/server/domain/events/catalogue";

const taskKinds: TaskKind[] = ["diagnose", "repair", "triage", "release_review"];
const sa = (name: string, privileged: boolean) => ({ name, namespace: "airlock", privileged });

const pools: AdmissionPool[] = [
  { id: "p-trusted-ro", name: "trusted-readonly", trustTier: "trusted", kind: "local", concurrency: 2, allowedTaskKinds: [], runtimeServiceAccount: sa("rt-ro", false), runnerServiceAccount: sa("runner", false) },
  { id: "p-trusted-priv", name: "trusted-privileged", trustTier: "trusted", kind: "local", concurrency: 2, allowedTaskKinds: ["repair", "release_review"], runtimeServiceAccount: sa("rt-priv", true), runnerServiceAccount: sa("runner", false) },
  { id: "p-sandbox", name: "sandbox", trustTier: "untrusted", kind: "local", concurrency: 2, allowedTaskKinds: ["diagnose", "repair"], runtimeServiceAccount: sa("rt-sandbox", false), runnerServiceAccount: sa("runner-sandbox", false) },
  { id: "p-k8s", name: "k8s", trustTier: "trusted", kind: "kubernetes", concurrency: 8, allowedTaskKinds: [], runtimeServiceAccount: sa("rt-k8s", false), runnerServiceAccount: sa("runner-k8s", false) },
];

const secretGrants: AdmissionSecretGrant[] = [
  { id: "g-api", secretName: "ANTHROPIC_API_KEY", stackId: "stack-1", privileged: false, trustedPoolsOnly: false, taskKinds: [] },
  { id: "g-gh", secretName: "GITHUB_TOKEN", stackId: "stack-1", privileged: true, trustedPoolsOnly: true, taskKinds: ["repair"] },
  { id: "g-sentry", secretName: "sentry-auth-token", stackId: null, privileged: false, trustedPoolsOnly: true, taskKinds: [] },
];
const configGrants: AdmissionConfigGrant[] = [
  { id: "c-ci", configMapName: "ci-endpoints", stackId: null, trustedPoolsOnly: false, taskKinds: [] },
  { id: "c-sentry", configMapName: "sentry-org", stackId: "stack-1", trustedPoolsOnly: true, taskKinds: ["diagnose", "repair"] },
];

function facts(patch: Partial<AdmissionFacts> = {}): AdmissionFacts {
  return {
    repository: { fullName: "acme/api", trustTier: "trusted" },
    isFork: false,
    refTrusted: true,
    taskKind: "repair",
    stack: { id: "stack-1", name: "diagnoser" },
    requestedSecrets: ["ANTHROPIC_API_KEY", "GITHUB_TOKEN", "sentry-auth-token"],
    requestedConfigMaps: ["ci-endpoints", "sentry-org"],
    actor: { kind: "automation", label: "rule failed-check", triggerRuleId: "rule-1" },
    ...patch,
  };
}

/** The shipped policy, evaluated purely: what decide() would store. */
function shippedPolicy(f: AdmissionFacts, grants: AdmissionSecretGrant[]): AdmissionInput["policy"] {
  const policyFacts = runnerSelectionFacts(f, grants);
  const tier = evaluate(runnerSelectionPolicy, policyFacts, { property: "pool_trust_tier" });
  const priv = evaluate(runnerSelectionPolicy, policyFacts, { property: "privileged_credentials" });
  return {
    poolTrustTier: { value: tier.value as TrustTier, decisionId: "d-tier", rule: tier.rule, explanation: tier.explanation },
    privilegedCredentials: { value: priv.value as boolean, decisionId: "d-priv", rule: priv.rule, explanation: priv.explanation },
  };
}

function input(f: AdmissionFacts, patch: Partial<AdmissionInput> = {}): AdmissionInput {
  return { ...f, policy: shippedPolicy(f, secretGrants), pools, secretGrants, configGrants, kubernetesAvailable: false, sandbox: { available: true, reason: null }, ...patch };
}

describe("admit", () => {
  it("gives a trusted repair run the privileged pool and its scoped secrets", () => {
    const d = admit(input(facts()));
    expect(d.admitted).toBe(true);
    expect(d.pool?.name).toBe("trusted-privileged");
    expect(d.runtimeServiceAccount?.name).toBe("rt-priv");
    expect(d.secretsGranted.map((s) => s.name)).toEqual(["ANTHROPIC_API_KEY", "GITHUB_TOKEN", "sentry-auth-token"]);
    expect(d.configMapsGranted.map((c) => c.name)).toEqual(["ci-endpoints", "sentry-org"]);
    expect(d.decisionIds).toEqual(["d-tier", "d-priv"]);
    expect(d.overrides).toEqual([]);
  });

  it("gives a trusted diagnosis no privileged secret, and says the grant is for repair only", () => {
    const d = admit(input(facts({ taskKind: "diagnose" })));
    expect(d.pool?.name).toBe("trusted-readonly");
    expect(d.privilegedCredentials).toBe(false);
    expect(d.secretsDenied).toEqual([{ name: "GITHUB_TOKEN", reason: "granted for repair only, not diagnose" }]);
  });

  it("falls back to a trusted pool with a privileged account only when no unprivileged one fits, and says so", () => {
    const d = admit(input(facts({ taskKind: "diagnose" }), { pools: [pools[1]!, { ...pools[1]!, id: "p2", name: "trusted-any", allowedTaskKinds: [] }] }));
    expect(d.admitted).toBe(true);
    expect(d.pool?.name).toBe("trusted-any");
    expect(d.privilegedCredentials).toBe(false);
    expect(d.secretsGranted.map((s) => s.name)).not.toContain("GITHUB_TOKEN");
    expect(d.summary).toContain("runs under rt-priv (privileged) without any privileged secret");
  });

  it("puts a fork PR on the sandbox with no privileged or trusted-only grant", () => {
    const d = admit(input(facts({ isFork: true })));
    expect(d.pool?.name).toBe("sandbox");
    expect(d.runtimeServiceAccount).toEqual(sa("rt-sandbox", false));
    expect(d.secretsGranted.map((s) => s.name)).toEqual(["ANTHROPIC_API_KEY"]);
    expect(d.secretsDenied).toEqual([
      { name: "GITHUB_TOKEN", reason: "privileged secret: fork PRs never receive privileged secrets" },
      { name: "sentry-auth-token", reason: "granted on trusted pools only" },
    ]);
    expect(d.configMapsDenied).toEqual([{ name: "sentry-org", reason: "granted on trusted pools only" }]);
  });

  it("overrides a policy edited to trust forks, and records the override", () => {
    const trusting = { value: "trusted" as const, decisionId: "d1", rule: "oops", explanation: "trust everyone" };
    const d = admit(
      input(facts({ isFork: true }), {
        policy: { poolTrustTier: trusting, privilegedCredentials: { value: true, decisionId: "d2", rule: "oops", explanation: "x" } },
      }),
    );
    expect(d.trustTier).toBe("untrusted");
    expect(d.privilegedCredentials).toBe(false);
    expect(d.pool?.name).toBe("sandbox");
    expect(d.overrides).toHaveLength(2);
  });

  it("refuses a person without the maintainer role before choosing a pool", () => {
    const d = admit(input(facts({ actor: { kind: "person", userId: "u-vic", label: "vic@example.test", role: "viewer" } })));
    expect(d.admitted).toBe(false);
    expect(d.refusal).toMatch(/only viewer of the repository; launching an agent needs maintainer/);
    expect(d.secretsGranted).toEqual([]);
  });

  it("refuses automation that acts under no trigger rule", () => {
    const d = admit(input(facts({ actor: { kind: "automation", label: "webhook", triggerRuleId: null } })));
    expect(d.admitted).toBe(false);
  });

  it("refuses when no pool of the tier runs the task kind, listing why each was skipped", () => {
    const d = admit(input(facts({ isFork: true, taskKind: "triage" })));
    expect(d.admitted).toBe(false);
    expect(d.refusal).toContain("no untrusted runner pool can run a triage task");
    expect(d.refusal).toContain("sandbox: does not run triage tasks");
  });

  it("skips kubernetes pools without a cluster, and uses them when one is configured", () => {
    const only = [pools[3]!];
    const off = admit(input(facts({ taskKind: "diagnose" }), { pools: only }));
    expect(off.refusal).toContain("no cluster is configured");
    const on = admit(input(facts({ taskKind: "diagnose" }), { pools: only, kubernetesAvailable: true }));
    expect(on.pool?.name).toBe("k8s");
  });

  it("prefers the least loaded eligible pool", () => {
    const d = admit(input(facts({ taskKind: "diagnose" }), { kubernetesAvailable: true, activeAttempts: { "p-trusted-ro": 2 } }));
    expect(d.pool?.name).toBe("k8s");
  });

  it("writes a payload the event catalogue accepts", () => {
    expect(zAdmissionPayload.safeParse(admissionEventPayload(admit(input(facts())))).success).toBe(true);
    expect(zAdmissionPayload.safeParse(admissionEventPayload(admit(input(facts({ taskKind: "triage", isFork: true }))))).success).toBe(true);
  });
});

// ---------------------------------------------------------------- the invariant, as a property

const arbTask = fc.constantFrom<TaskKind>(...taskKinds);
const arbTier = fc.constantFrom<TrustTier>("trusted", "untrusted");
const arbStackId = fc.constantFrom<string | null>("stack-1", "stack-2", null);
const arbName = fc.constantFrom("ANTHROPIC_API_KEY", "GITHUB_TOKEN", "NPM_TOKEN", "sentry-auth-token");
const arbMap = fc.constantFrom("ci-endpoints", "sentry-org", "release-channels");
const arbSa = fc.record({ name: fc.constantFrom("a", "b", "c"), namespace: fc.constant("ns"), privileged: fc.boolean() });

const arbPool = fc.record({
  id: fc.uuid(),
  name: fc.string({ minLength: 1, maxLength: 8 }),
  trustTier: arbTier,
  kind: fc.constantFrom<"local" | "kubernetes">("local", "kubernetes"),
  concurrency: fc.integer({ min: 0, max: 5 }),
  allowedTaskKinds: fc.subarray(taskKinds),
  runtimeServiceAccount: arbSa,
  runnerServiceAccount: arbSa,
});
const arbSecretGrant = fc.record({
  id: fc.uuid(),
  secretName: arbName,
  stackId: arbStackId,
  privileged: fc.boolean(),
  trustedPoolsOnly: fc.boolean(),
  taskKinds: fc.subarray(taskKinds),
});
const arbConfigGrant = fc.record({
  id: fc.uuid(),
  configMapName: arbMap,
  stackId: arbStackId,
  trustedPoolsOnly: fc.boolean(),
  taskKinds: fc.subarray(taskKinds),
});
/** Untrusted code in every form: a fork, unknown origin, an untrusted or unknown ref, an untrusted repository. */
const arbUntrustedRef = fc
  .record({
    isFork: fc.constantFrom<boolean | null>(true, false, null),
    refTrusted: fc.constantFrom<boolean | null>(true, false, null),
    repoTier: arbTier,
  })
  .filter((r) => r.isFork !== false || r.refTrusted !== true || r.repoTier === "untrusted");
const arbOutcome = <T>(value: fc.Arbitrary<T>) =>
  fc.record({ value, decisionId: fc.constant("d"), rule: fc.constant(null), explanation: fc.constant("random") });

describe("admission invariant (property)", () => {
  it("never gives untrusted code (forks, untrusted refs) a trusted pool, a privileged service account or a privileged/trusted-only grant", () => {
    fc.assert(
      fc.property(
        arbUntrustedRef,
        arbTask,
        fc.array(arbPool, { maxLength: 6 }),
        fc.array(arbSecretGrant, { maxLength: 8 }),
        fc.array(arbConfigGrant, { maxLength: 5 }),
        fc.subarray(["ANTHROPIC_API_KEY", "GITHUB_TOKEN", "NPM_TOKEN", "sentry-auth-token"]),
        fc.subarray(["ci-endpoints", "sentry-org", "release-channels"]),
        // Half the time the real shipped policy decides; half the time an adversarial (edited) one.
        fc.option(fc.record({ poolTrustTier: arbOutcome(arbTier), privilegedCredentials: arbOutcome(fc.boolean()) }), { nil: undefined }),
        fc.boolean(),
        (ref, taskKind, pools, grants, configs, secrets, maps, edited, k8s) => {
          const f = facts({
            isFork: ref.isFork,
            refTrusted: ref.refTrusted,
            repository: { fullName: "acme/api", trustTier: ref.repoTier },
            taskKind,
            requestedSecrets: secrets,
            requestedConfigMaps: maps,
          });
          expect(isUntrustedCode(f)).toBe(true);
          const d = admit({ ...f, policy: edited ?? shippedPolicy(f, grants), pools, secretGrants: grants, configGrants: configs, kubernetesAvailable: k8s });
          const byId = new Map(grants.map((g) => [g.id, g]));
          const configById = new Map(configs.map((g) => [g.id, g]));
          expect(d.trustTier).toBe("untrusted");
          expect(d.privilegedCredentials).toBe(false);
          if (d.pool) expect(pools.find((p) => p.id === d.pool!.id)?.trustTier).toBe("untrusted");
          expect(d.runtimeServiceAccount?.privileged ?? false).toBe(false);
          expect(d.runnerServiceAccount?.privileged ?? false).toBe(false);
          for (const s of d.secretsGranted) {
            const grant = byId.get(s.grantId)!;
            expect(grant.privileged).toBe(false);
            expect(grant.trustedPoolsOnly).toBe(false);
            expect(grant.taskKinds.length === 0 || grant.taskKinds.includes(taskKind)).toBe(true);
          }
          for (const c of d.configMapsGranted) expect(configById.get(c.grantId)!.trustedPoolsOnly).toBe(false);
          // Every requested name is accounted for: granted or refused with a reason.
          expect(d.secretsGranted.length + d.secretsDenied.length).toBe(new Set(secrets).size);
        },
      ),
      { numRuns: 2_000 },
    );
  });

  it("grants a trusted run only secrets whose grant allows its task kind", () => {
    fc.assert(
      fc.property(arbTask, fc.array(arbPool, { maxLength: 6 }), fc.array(arbSecretGrant, { maxLength: 8 }), (taskKind, pools, grants) => {
        const f = facts({ taskKind, requestedSecrets: ["ANTHROPIC_API_KEY", "GITHUB_TOKEN", "NPM_TOKEN", "sentry-auth-token"] });
        const d = admit({ ...f, policy: shippedPolicy(f, grants), pools, secretGrants: grants, configGrants: [], kubernetesAvailable: true, sandbox: { available: true, reason: null } });
        for (const s of d.secretsGranted) {
          const grant = grants.find((g) => g.id === s.grantId)!;
          expect(grant.taskKinds.length === 0 || grant.taskKinds.includes(taskKind)).toBe(true);
          if (grant.privileged) expect(d.privilegedCredentials).toBe(true);
        }
        // A privileged account without privileged credentials only when no unprivileged pool could run it.
        const privilegedAccount = d.runtimeServiceAccount?.privileged || d.runnerServiceAccount?.privileged;
        if (!d.privilegedCredentials && privilegedAccount) {
          const better = pools.some(
            (p) =>
              p.trustTier === "trusted" &&
              p.concurrency > 0 &&
              (p.allowedTaskKinds.length === 0 || p.allowedTaskKinds.includes(taskKind)) &&
              !p.runtimeServiceAccount.privileged &&
              !p.runnerServiceAccount.privileged,
          );
          expect(better).toBe(false);
          expect(d.summary).toContain("without any privileged secret");
        }
      }),
      { numRuns: 1_000 },
    );
  });
});
