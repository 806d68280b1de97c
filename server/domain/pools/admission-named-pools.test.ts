import { describe, expect, it } from "vitest";
import type { TaskKind } from "@/server/db/generated/enums";
import { admit, type AdmissionConfigGrant, type AdmissionFacts, type AdmissionInput, type AdmissionPool, type AdmissionSecretGrant } from "./admission";

// Grants scoped to named runner pools (issue 8): admission gives such a grant only on a pool it
// names, still never a privileged one to untrusted code, and says why it refused.

const sa = (name: string, privileged: boolean) => ({ name, namespace: "airlock", privileged });
const pools: AdmissionPool[] = [
  { id: "p-a", name: "trusted-a", trustTier: "trusted", kind: "local", concurrency: 2, allowedTaskKinds: [], runtimeServiceAccount: sa("rt-a", true), runnerServiceAccount: sa("runner", false) },
  { id: "p-sandbox", name: "sandbox", trustTier: "untrusted", kind: "local", concurrency: 2, allowedTaskKinds: [], runtimeServiceAccount: sa("rt-sb", false), runnerServiceAccount: sa("runner-sb", false) },
];

function input(opts: { fork: boolean; pools: AdmissionPool[]; secrets?: AdmissionSecretGrant[]; configs?: AdmissionConfigGrant[]; taskKind?: TaskKind }): AdmissionInput {
  const facts: AdmissionFacts = {
    repository: { fullName: "acme/api", trustTier: "trusted" },
    isFork: opts.fork,
    refTrusted: !opts.fork,
    taskKind: opts.taskKind ?? "repair",
    stack: { id: "stack-1", name: "diagnoser" },
    requestedSecrets: (opts.secrets ?? []).map((g) => g.secretName),
    requestedConfigMaps: (opts.configs ?? []).map((g) => g.configMapName),
    actor: { kind: "automation", label: "rule", triggerRuleId: "rule-1" },
  };
  const tier = opts.fork ? "untrusted" : "trusted";
  return {
    ...facts,
    policy: {
      poolTrustTier: { value: tier, decisionId: null, rule: "r", explanation: `${tier} code` },
      privilegedCredentials: { value: !opts.fork, decisionId: null, rule: "r", explanation: "policy" },
    },
    pools: opts.pools,
    secretGrants: opts.secrets ?? [],
    configGrants: opts.configs ?? [],
    kubernetesAvailable: false,
    sandbox: { available: true, reason: null },
  };
}

const secret = (patch: Partial<AdmissionSecretGrant>): AdmissionSecretGrant => ({
  id: "g",
  secretName: "DEPLOY_TOKEN",
  stackId: null,
  privileged: false,
  trustedPoolsOnly: false,
  taskKinds: [],
  ...patch,
});

describe("admission with grants scoped to named pools", () => {
  it("gives a named grant on the pool it names, and refuses it on another with the reason", () => {
    const onA = admit(input({ fork: false, pools, secrets: [secret({ poolScope: "named_pools", poolIds: ["p-a"], privileged: true, trustedPoolsOnly: true })] }));
    expect(onA.pool?.name).toBe("trusted-a");
    expect(onA.secretsGranted).toEqual([{ name: "DEPLOY_TOKEN", grantId: "g", privileged: true }]);

    const elsewhere = admit(input({ fork: false, pools, secrets: [secret({ poolScope: "named_pools", poolIds: ["p-other"] })] }));
    expect(elsewhere.secretsGranted).toEqual([]);
    expect(elsewhere.secretsDenied).toEqual([{ name: "DEPLOY_TOKEN", reason: "granted to named pools only, not trusted-a" }]);
  });

  it("a named config grant reaches a fork's sandbox pool it names, and not a trusted pool it does not", () => {
    const config: AdmissionConfigGrant = { id: "c", configMapName: "sandbox-endpoints", stackId: null, trustedPoolsOnly: false, poolScope: "named_pools", poolIds: ["p-sandbox"], taskKinds: [] };
    const fork = admit(input({ fork: true, pools, configs: [config] }));
    expect(fork.pool?.name).toBe("sandbox");
    expect(fork.configMapsGranted).toEqual([{ name: "sandbox-endpoints", grantId: "c" }]);
    const trusted = admit(input({ fork: false, pools, configs: [config] }));
    expect(trusted.configMapsDenied).toEqual([{ name: "sandbox-endpoints", reason: "granted to named pools only, not trusted-a" }]);
  });

  it("never gives a privileged secret to untrusted code, even on a pool the grant names", () => {
    // Stored data that breaks the rule (the domain refuses to save it) still grants nothing.
    const bad = secret({ privileged: true, trustedPoolsOnly: true, poolScope: "named_pools", poolIds: ["p-sandbox"] });
    const d = admit(input({ fork: true, pools, secrets: [bad] }));
    expect(d.pool?.name).toBe("sandbox");
    expect(d.secretsGranted).toEqual([]);
    expect(d.secretsDenied[0]?.reason).toMatch(/fork PRs never receive privileged secrets/);
  });

  it("a trust-tier grant (no scope, as before named pools) still reaches every pool its tier allows", () => {
    for (const fork of [false, true]) {
      const d = admit(input({ fork, pools, secrets: [secret({})] }));
      expect(d.secretsGranted.map((s) => s.name), `fork=${fork}`).toEqual(["DEPLOY_TOKEN"]);
    }
  });

  it("a named grant with no pools left reaches nothing (it never widens)", () => {
    for (const fork of [false, true]) {
      const d = admit(input({ fork, pools, secrets: [secret({ poolScope: "named_pools", poolIds: [] })] }));
      expect(d.secretsGranted, `fork=${fork}`).toEqual([]);
    }
  });
});
