import { describe, expect, it } from "vitest";
import { renderAttemptJob, type K8sJobInput } from "./k8s-manifest";
import { renderAttemptNetworkPolicy } from "./k8s-network-policy";

// The sandbox promise as a Kubernetes pool renders it, per trust tier: the Job's pod and
// container field by field, and the NetworkPolicy for each network mode.

const job = (tier: "trusted" | "untrusted", patch: Partial<K8sJobInput> = {}) =>
  renderAttemptJob({
    runId: "run1",
    attemptId: "att1",
    attemptNumber: 1,
    namespace: "agents",
    image: "ghcr.io/airlock/agent-runner:1",
    command: ["claude", "-p"],
    pool: { name: `${tier}-k8s`, trustTier: tier },
    serviceAccount: { name: `${tier}-runtime`, privileged: false },
    wallClockMs: 600_000,
    limits: { memoryMb: 4096, diskMb: 10240 },
    network: "restricted",
    ...patch,
  });

describe.each(["trusted", "untrusted"] as const)("the Job of a %s pool", (tier) => {
  const pod = job(tier).spec.template.spec;
  const container = pod.containers[0]!;

  it("runs as non-root with RuntimeDefault seccomp, and no service account token", () => {
    expect(pod.securityContext).toEqual({ runAsNonRoot: true, runAsUser: 1000, runAsGroup: 1000, fsGroup: 1000, seccompProfile: { type: "RuntimeDefault" } });
    expect(pod.automountServiceAccountToken).toBe(false);
    expect(pod.enableServiceLinks).toBe(false);
    expect(pod.serviceAccountName).toBe(`${tier}-runtime`);
  });

  it("has a read-only root file system, no privilege escalation and every capability dropped", () => {
    expect(container.securityContext).toEqual({ privileged: false, allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, runAsNonRoot: true, capabilities: { drop: ["ALL"] } });
  });

  it("requests and limits resources from the pool's sandbox limits", () => {
    expect(container.resources).toEqual({
      requests: { cpu: "500m", memory: "1Gi", "ephemeral-storage": "2Gi" },
      limits: { cpu: "2", memory: "4096Mi", "ephemeral-storage": "10240Mi" },
    });
    expect(pod.volumes.find((v) => v.name === "workspace")).toEqual({ name: "workspace", emptyDir: { sizeLimit: "10240Mi" } });
  });

  it("on a restricted network, points the agent's HTTP clients at the namespace's egress proxy", () => {
    expect(container.env.slice(0, 4)).toEqual(["HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy"].map((name) => ({ name, value: "http://airlock-egress-proxy.agents:3128" })));
    expect(job(tier, { network: "none" }).spec.template.spec.containers[0]!.env.some((e) => e.name === "HTTPS_PROXY")).toBe(false);
  });
});

it("only a trusted pool's privileged account gets an API token; an untrusted pool refuses a privileged account", () => {
  expect(job("trusted", { serviceAccount: { name: "deployer", privileged: true } }).spec.template.spec.automountServiceAccountToken).toBe(true);
  expect(() => job("untrusted", { serviceAccount: { name: "deployer", privileged: true } })).toThrow(/cannot run as the privileged service account/);
});

describe("the attempt's NetworkPolicy", () => {
  const policy = (mode: "none" | "restricted" | "open", allowedHosts: string[] = []) =>
    renderAttemptNetworkPolicy({ runId: "run1", attemptId: "att1", namespace: "agents", network: { mode, allowedHosts } });

  it("selects exactly the attempt's pod and admits no ingress", () => {
    const p = policy("none");
    expect(p.apiVersion).toBe("networking.k8s.io/v1");
    expect(p.kind).toBe("NetworkPolicy");
    expect(p.metadata).toMatchObject({ name: "airlock-run1-att1", namespace: "agents" });
    expect(p.spec.podSelector).toEqual({ matchLabels: { "airlock.dev/run-id": "run1", "airlock.dev/attempt-id": "att1" } });
    const labels = job("untrusted").spec.template.metadata.labels;
    for (const [k, v] of Object.entries(p.spec.podSelector.matchLabels)) expect(labels[k]).toBe(v);
    expect(p.spec.policyTypes).toEqual(["Ingress", "Egress"]);
    expect(p.spec.ingress).toEqual([]);
  });

  it("none: denies all egress, DNS included", () => {
    expect(policy("none").spec.egress).toEqual([]);
  });

  it("restricted: DNS, the egress proxy, and the allowlist's IP literals; host names go to the proxy", () => {
    const p = policy("restricted", ["api.anthropic.com", "10.1.2.3:8443", "192.0.2.7"]);
    expect(p.spec.egress).toEqual([
      { to: [{ namespaceSelector: {}, podSelector: { matchLabels: { "k8s-app": "kube-dns" } } }], ports: [{ protocol: "UDP", port: 53 }, { protocol: "TCP", port: 53 }] },
      { to: [{ podSelector: { matchLabels: { "airlock.dev/egress-proxy": "true" } } }], ports: [{ protocol: "TCP", port: 3128 }] },
      { to: [{ ipBlock: { cidr: "10.1.2.3/32" } }], ports: [{ protocol: "TCP", port: 8443 }] },
      { to: [{ ipBlock: { cidr: "192.0.2.7/32" } }] },
    ]);
    expect(p.metadata.annotations).toEqual({ "airlock.dev/network": "restricted", "airlock.dev/allowed-hosts": "api.anthropic.com,10.1.2.3:8443,192.0.2.7" });
  });

  it("open: anything outside the cluster's private, loopback and link-local ranges", () => {
    expect(policy("open").spec.egress[1]).toEqual({
      to: [{ ipBlock: { cidr: "0.0.0.0/0", except: ["10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "169.254.0.0/16", "100.64.0.0/10", "127.0.0.0/8"] } }],
    });
  });
});
