import type { NetworkMode } from "@/server/execution/sandbox/policy";
import { jobName, labelValue } from "./k8s-manifest";

// The NetworkPolicy that holds one attempt's pod to its pool's network mode, the Kubernetes half
// of the sandbox promise. It selects the attempt's pod by its labels, admits no ingress, and
// allows egress by mode: `none` nothing at all; `restricted` DNS, the IP literals the allowlist
// names, and the namespace's egress proxy (pods labelled `airlock.dev/egress-proxy: "true"`,
// port 3128), which is where host names are enforced (a NetworkPolicy matches addresses, not
// names: the hosts go on the policy as an annotation for that proxy, and the pod gets
// HTTP(S)_PROXY); `open` anything outside the cluster's private and link-local ranges.

export const egressProxyPort = 3128;

export type K8sNetworkPolicy = {
  apiVersion: "networking.k8s.io/v1";
  kind: "NetworkPolicy";
  metadata: { name: string; namespace: string; labels: Record<string, string>; annotations: Record<string, string> };
  spec: {
    podSelector: { matchLabels: Record<string, string> };
    policyTypes: ["Ingress", "Egress"];
    ingress: [];
    egress: Array<Record<string, unknown>>;
  };
};

const privateRanges = ["10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "169.254.0.0/16", "100.64.0.0/10", "127.0.0.0/8"];
const dns = { to: [{ namespaceSelector: {}, podSelector: { matchLabels: { "k8s-app": "kube-dns" } } }], ports: [{ protocol: "UDP", port: 53 }, { protocol: "TCP", port: 53 }] };

/** `1.2.3.4` or `1.2.3.4:443` from an allowlist entry; null for a host name. */
function ipEntry(entry: string): { cidr: string; port: number | null } | null {
  const m = /^(\d{1,3}(?:\.\d{1,3}){3})(?::(\d+))?$/.exec(entry) ?? /^\[([0-9a-f:]+)\](?::(\d+))?$/.exec(entry);
  if (!m) return null;
  return { cidr: `${m[1]}/${m[1]!.includes(":") ? 128 : 32}`, port: m[2] ? Number(m[2]) : null };
}

export function renderAttemptNetworkPolicy(input: {
  runId: string;
  attemptId: string;
  namespace: string;
  network: { mode: NetworkMode; allowedHosts: string[] };
}): K8sNetworkPolicy {
  const { mode, allowedHosts } = input.network;
  let egress: Array<Record<string, unknown>> = [];
  if (mode === "restricted") {
    const ips = allowedHosts.map(ipEntry).filter((e): e is NonNullable<typeof e> => e !== null);
    egress = [
      dns,
      { to: [{ podSelector: { matchLabels: { "airlock.dev/egress-proxy": "true" } } }], ports: [{ protocol: "TCP", port: egressProxyPort }] },
      ...ips.map((ip) => ({ to: [{ ipBlock: { cidr: ip.cidr } }], ...(ip.port ? { ports: [{ protocol: "TCP", port: ip.port }] } : {}) })),
    ];
  } else if (mode === "open") {
    egress = [dns, { to: [{ ipBlock: { cidr: "0.0.0.0/0", except: privateRanges } }] }];
  }
  return {
    apiVersion: "networking.k8s.io/v1",
    kind: "NetworkPolicy",
    metadata: {
      name: jobName(input.runId, input.attemptId),
      namespace: input.namespace,
      labels: { "app.kubernetes.io/managed-by": "airlock", "airlock.dev/run-id": labelValue(input.runId), "airlock.dev/attempt-id": labelValue(input.attemptId) },
      annotations: { "airlock.dev/network": mode, "airlock.dev/allowed-hosts": mode === "restricted" ? allowedHosts.join(",") : "" },
    },
    spec: {
      // The attempt's pod, and only it: the Job's pod template carries these labels.
      podSelector: { matchLabels: { "airlock.dev/run-id": labelValue(input.runId), "airlock.dev/attempt-id": labelValue(input.attemptId) } },
      policyTypes: ["Ingress", "Egress"],
      ingress: [],
      egress,
    },
  };
}
