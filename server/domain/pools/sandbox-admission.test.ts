import { describe, expect, it } from "vitest";
import { defaultSandboxLimits } from "@/server/execution/sandbox/policy";
import { admit, type AdmissionInput, type AdmissionPool } from "./admission";
import type { PoolSandbox } from "./sandbox-admission";

// Admission's half of the sandbox: fail closed where no sandbox works, an admin's explicit
// choice for a trusted pool to run without one, and `open` network only for trusted code.

const sa = (name: string) => ({ name, namespace: "airlock", privileged: false });
const settings = (patch: Partial<PoolSandbox> = {}): PoolSandbox => ({ networkMode: "restricted", allowedHosts: ["registry.npmjs.org"], limits: defaultSandboxLimits, allowUnsandboxed: false, ...patch });
const pool = (name: string, trustTier: "trusted" | "untrusted", sandbox: PoolSandbox, kind: "local" | "kubernetes" = "local"): AdmissionPool => ({
  id: `p-${name}`,
  name,
  trustTier,
  kind,
  concurrency: 2,
  allowedTaskKinds: [],
  runtimeServiceAccount: sa(`${name}-rt`),
  runnerServiceAccount: sa(`${name}-runner`),
  sandbox,
});

function input(opts: { fork: boolean; pools: AdmissionPool[]; available: boolean; runsProcess?: boolean; declaredNetwork?: "none" | "restricted" | "open" }): AdmissionInput {
  const tier = opts.fork ? "untrusted" : "trusted";
  return {
    repository: { fullName: "acme/api", trustTier: "trusted" },
    isFork: opts.fork,
    refTrusted: !opts.fork,
    taskKind: "repair",
    stack: { id: "s1", name: "claude" },
    requestedSecrets: [],
    requestedConfigMaps: [],
    actor: { kind: "automation", label: "rule", triggerRuleId: "r1" },
    agent: { runsProcess: opts.runsProcess ?? true, hosts: ["api.anthropic.com"] },
    forgeHosts: ["github.com"],
    declaredNetwork: opts.declaredNetwork,
    policy: {
      poolTrustTier: { value: tier, decisionId: null, rule: "r", explanation: "by the test" },
      privilegedCredentials: { value: false, decisionId: null, rule: "r", explanation: "by the test" },
    },
    pools: opts.pools,
    secretGrants: [],
    configGrants: [],
    kubernetesAvailable: true,
    sandbox: opts.available ? { available: true, reason: null } : { available: false, reason: "sandbox unavailable: install bubblewrap (apt-get install -y bubblewrap socat)" },
  };
}

describe("admission and the sandbox", () => {
  it("refuses an untrusted attempt on a machine without a working sandbox, with the reason", () => {
    const d = admit(input({ fork: true, available: false, pools: [pool("sandbox", "untrusted", settings())] }));
    expect(d.admitted).toBe(false);
    expect(d.refusal).toContain("sandbox: sandbox unavailable: install bubblewrap");
    expect(d.sandbox).toBeNull();
  });

  it("refuses a trusted local pool without a sandbox unless an admin allowed it to run unsandboxed", () => {
    const refused = admit(input({ fork: false, available: false, pools: [pool("trusted", "trusted", settings())] }));
    expect(refused.admitted).toBe(false);
    expect(refused.refusal).toContain("an admin may let this trusted pool run unsandboxed");
    const allowed = admit(input({ fork: false, available: false, pools: [pool("trusted", "trusted", settings({ allowUnsandboxed: true }))] }));
    expect(allowed.admitted).toBe(true);
    expect(allowed.sandbox).toMatchObject({ kind: "unsandboxed", reason: expect.stringContaining("an admin allowed pool trusted to run unsandboxed") });
    expect(allowed.summary).toContain("NO SANDBOX");
  });

  it("never lets an untrusted pool run unsandboxed, whatever its stored setting says", () => {
    const d = admit(input({ fork: true, available: false, pools: [pool("sandbox", "untrusted", settings({ allowUnsandboxed: true }))] }));
    expect(d.admitted).toBe(false);
  });

  it("runs in bubblewrap where it works, with the pool's hosts, the stack's model API and (trusted) the forge", () => {
    const trusted = admit(input({ fork: false, available: true, pools: [pool("trusted", "trusted", settings())] }));
    expect(trusted.sandbox).toEqual({ kind: "bubblewrap", reason: null, network: { mode: "restricted", allowedHosts: ["api.anthropic.com", "registry.npmjs.org", "github.com"] }, limits: defaultSandboxLimits });
    const fork = admit(input({ fork: true, available: true, pools: [pool("sandbox", "untrusted", settings())] }));
    expect(fork.sandbox?.network.allowedHosts).toEqual(["api.anthropic.com", "registry.npmjs.org"]);
  });

  it("gives open network to trusted code on a trusted pool only; anything else is held to restricted and says so", () => {
    const open = settings({ networkMode: "open" });
    expect(admit(input({ fork: false, available: true, pools: [pool("t", "trusted", open)] })).sandbox?.network.mode).toBe("open");
    const fork = admit(input({ fork: true, available: true, pools: [pool("u", "untrusted", open)] }));
    expect(fork.sandbox?.network.mode).toBe("restricted");
    expect(fork.overrides).toContain("open network is for trusted pools running trusted code only; restricted instead");
  });

  it("a run that declares no network gets none, whatever the pool allows", () => {
    const d = admit(input({ fork: false, available: true, declaredNetwork: "none", pools: [pool("t", "trusted", settings({ networkMode: "open" }))] }));
    expect(d.sandbox?.network).toEqual({ mode: "none", allowedHosts: [] });
  });

  it("the scripted demo agent starts no process: no sandbox needed, and the decision says so", () => {
    const d = admit(input({ fork: true, available: false, runsProcess: false, pools: [pool("sandbox", "untrusted", settings())] }));
    expect(d.admitted).toBe(true);
    expect(d.sandbox).toMatchObject({ kind: "no_process", reason: "scripted demo agent: no process" });
  });

  it("a Kubernetes pool's Job is its sandbox, with the pool's network and limits", () => {
    const d = admit(input({ fork: true, available: false, pools: [pool("k8s", "untrusted", settings(), "kubernetes")] }));
    expect(d.sandbox).toMatchObject({ kind: "kubernetes", network: { mode: "restricted" } });
  });
});
