import { randomUUID } from "node:crypto";
import { mkdir, writeFile } from "node:fs/promises";
import { dirname, resolve, sep } from "node:path";
import { guessArtifactKind, guessMediaType } from "@/server/execution/agents/artifacts";
import { createOutputDecoder, type OutputFormat } from "@/server/execution/agents/output-decoder";
import { EventChannel } from "@/server/execution/agents/event-channel";
import { type AgentAdapter, type AgentExit, type AgentSession, AgentStartError, type CollectedArtifact, type SessionEvent } from "@/server/execution/agents/types";
import { jobName, renderAttemptJob, type K8sJobManifest } from "@/server/execution/kubernetes/k8s-manifest";
import { type K8sNetworkPolicy, renderAttemptNetworkPolicy } from "@/server/execution/kubernetes/k8s-network-policy";
import type { SandboxStarted } from "@/server/execution/sandbox/events";
import { defaultSandboxLimits } from "@/server/execution/sandbox/policy";
import type { ClaimResult } from "@/server/domain/run-engine/claim-attempt";
import type { StackSpec } from "@/server/domain/stacks/spec";
import { envVarName } from "@/server/env";
import { isAppError } from "@/server/errors";
import { contentDigest } from "@/server/lib/digest";
import { createArtifactFrameReader, withArtifactFrames } from "./k8s-artifacts";
import type { KubeLauncher } from "@/server/execution/runner/settings";

// Attempts on a `kubernetes` runner pool: the attempt runs as a batch/v1 Job rendered by
// renderAttemptJob (policy-selected service account, granted secrets as secretKeyRefs, locked
// down pod), with the prompt and context in a ConfigMap. The worker follows the pod's log (the
// agent's stdout, decoded like the command adapter's) and the Job's state; cancel and the wall
// clock delete the Job. Secrets are referenced by name (Secret `airlock-<name>`, key `value`),
// never copied. Artifacts come back framed in the pod's log (see k8s-artifacts.ts) and are
// rebuilt in the attempt's local artifacts folder (`artifactsDir`), digested here.

export type KubeApi = {
  createConfigMap(namespace: string, name: string, data: Record<string, string>, labels: Record<string, string>): Promise<void>;
  createJob(manifest: K8sJobManifest): Promise<void>;
  jobState(namespace: string, name: string): Promise<"pending" | "active" | "succeeded" | "failed">;
  /** The log of the Job's pod so far, or null while no pod has started. */
  podLog(namespace: string, jobName: string): Promise<string | null>;
  deleteJob(namespace: string, name: string): Promise<void>;
  deleteConfigMap(namespace: string, name: string): Promise<void>;
  /** The attempt's NetworkPolicy: created before its Job, so the pod never runs without it. */
  createNetworkPolicy(policy: K8sNetworkPolicy): Promise<void>;
  deleteNetworkPolicy(namespace: string, name: string): Promise<void>;
};

type Claim = Extract<ClaimResult, { kind: "started" }>;

const k8sName = (name: string) => `airlock-${name.toLowerCase().replace(/[^a-z0-9-]+/g, "-").replace(/^-+|-+$/g, "")}`.slice(0, 63);

export function createKubernetesAdapter(opts: { api: KubeApi; claim: Claim; spec: StackSpec; image: string; pollMs?: number }): AgentAdapter {
  const { api, claim, spec } = opts;
  const pollMs = opts.pollMs ?? 2_000;
  return {
    kind: "command",
    async start(options): Promise<AgentSession> {
      if (spec.adapter.kind !== "command") throw new AgentStartError(`${spec.adapter.kind} agents run on local pools only, not on Kubernetes (yet)`);
      const { admission, pool, attempt, run } = claim;
      const namespace = pool.namespace;
      const name = jobName(run.id, attempt.id);
      let manifest: K8sJobManifest;
      const sandbox = admission.sandbox ?? { network: { mode: "restricted" as const, allowedHosts: [] }, limits: defaultSandboxLimits };
      const policy = renderAttemptNetworkPolicy({ runId: run.id, attemptId: attempt.id, namespace, network: sandbox.network });
      try {
        manifest = renderAttemptJob({
          runId: run.id,
          attemptId: attempt.id,
          attemptNumber: attempt.number,
          namespace,
          image: opts.image,
          command: withArtifactFrames(spec.adapter.command),
          pool: { name: pool.name, trustTier: admission.pool?.trustTier ?? "untrusted" },
          serviceAccount: { name: admission.runtimeServiceAccount?.name ?? "default", privileged: admission.runtimeServiceAccount?.privileged ?? false },
          wallClockMs: options.limits.wallClockMs,
          grantedSecrets: admission.secretsGranted.map((s) => ({ envName: envVarName(s.name), secretName: k8sName(s.name), key: "value", privileged: s.privileged, trustedPoolsOnly: false })),
          grantedConfigs: admission.configMapsGranted.map((c) => ({ envName: envVarName(c.name), configMapName: k8sName(c.name), key: "value", trustedPoolsOnly: false })),
          inputConfigMap: `${name}-input`.slice(0, 63),
          limits: sandbox.limits,
          network: sandbox.network.mode,
        });
      } catch (err) {
        throw new AgentStartError(isAppError(err) ? err.message : `could not render the Job: ${(err as Error).message}`, { cause: err });
      }
      const inputName = `${name}-input`.slice(0, 63);
      try {
        await api.createNetworkPolicy(policy);
        await api.createConfigMap(namespace, inputName, { "prompt.md": options.prompt, "context.json": JSON.stringify(options.contextBundle ?? null) }, manifest.metadata.labels);
        await api.createJob(manifest);
      } catch (err) {
        await api.deleteConfigMap(namespace, inputName).catch(() => undefined);
        await api.deleteNetworkPolicy(namespace, policy.metadata.name).catch(() => undefined);
        throw new AgentStartError(`the cluster refused the Job: ${(err as Error).message}`, { cause: err });
      }
      const started: SandboxStarted = {
        phase: "started",
        kind: "kubernetes",
        unsandboxedReason: null,
        network: { mode: sandbox.network.mode, allowedHosts: sandbox.network.mode === "none" ? [] : sandbox.network.allowedHosts.slice(0, 200) },
        limits: sandbox.limits,
        user: `uid ${manifest.spec.template.spec.securityContext.runAsUser as number}, non-root, read-only root, no capabilities, NetworkPolicy ${policy.metadata.name}`,
      };
      return follow({ api, namespace, name, inputName, pollMs, options, outputFormat: spec.adapter.outputFormat, started });
    },
  };
}

function follow(p: {
  api: KubeApi;
  namespace: string;
  name: string;
  inputName: string;
  pollMs: number;
  options: Parameters<AgentAdapter["start"]>[0];
  outputFormat: OutputFormat;
  started: SandboxStarted;
}): AgentSession {
  const channel = new EventChannel<SessionEvent>(p.options.onEvent);
  channel.push({ type: "sandbox", payload: p.started });
  const decoder = createOutputDecoder({ format: p.outputFormat });
  const frames = createArtifactFrameReader();
  const sessionId = `k8s-${randomUUID()}`;
  let stopped: { status: "cancelled" | "timed_out"; reason: string } | undefined;
  let consumed = 0;
  const system = (text: string) => channel.push({ type: "log", payload: { stream: "system", text } });
  const stop = (status: "cancelled" | "timed_out", reason: string) => {
    stopped ??= { status, reason };
  };
  const deadline = Date.now() + p.options.limits.wallClockMs;
  p.options.signal?.addEventListener("abort", () => stop("cancelled", String(p.options.signal?.reason ?? "aborted")), { once: true });
  system(`Kubernetes Job ${p.namespace}/${p.name} created`);

  const readLog = async (final: boolean) => {
    const text = await p.api.podLog(p.namespace, p.name).catch(() => null);
    if (text === null) return;
    const end = final ? text.length : text.lastIndexOf("\n") + 1;
    if (end <= consumed) return;
    for (const line of text.slice(consumed, end).split("\n")) {
      if (line && !frames.accept(line)) for (const e of decoder.decodeLine(line)) channel.push(e);
    }
    consumed = end;
  };

  const exit = (async (): Promise<AgentExit> => {
    let state: Awaited<ReturnType<KubeApi["jobState"]>> = "pending";
    while (!stopped) {
      state = await p.api.jobState(p.namespace, p.name).catch(() => state);
      await readLog(false);
      if (state === "succeeded" || state === "failed") break;
      if (Date.now() >= deadline) stop("timed_out", `wall-clock limit of ${Math.round(p.options.limits.wallClockMs / 1000)} s reached`);
      else await new Promise((r) => setTimeout(r, p.pollMs));
    }
    await readLog(true);
    if (stopped) await p.api.deleteJob(p.namespace, p.name).catch(() => undefined);
    await p.api.deleteConfigMap(p.namespace, p.inputName).catch(() => undefined);
    await p.api.deleteNetworkPolicy(p.namespace, p.name).catch(() => undefined);
    const artifacts = await writeFramedArtifacts(p.options.artifactsDir, frames.finish(), system);
    const result: AgentExit = stopped
      ? { status: stopped.status, exitCode: null, reason: stopped.reason, artifacts }
      : state === "succeeded"
        ? { status: "succeeded", exitCode: 0, reason: `Job ${p.name} succeeded`, artifacts }
        : { status: "failed", exitCode: null, reason: `Job ${p.name} failed`, artifacts };
    system(`Agent exited: ${result.status} (${result.reason})`);
    channel.close();
    return result;
  })();
  return { sessionId, events: channel, exit, cancel: (reason) => stop("cancelled", reason) };
}

/** Writes the files framed in the pod's log under `dir` (never outside it) and describes them. */
async function writeFramedArtifacts(
  dir: string,
  framed: ReturnType<ReturnType<typeof createArtifactFrameReader>["finish"]>,
  system: (text: string) => void,
): Promise<CollectedArtifact[]> {
  for (const s of framed.skipped) system(`Artifact ${s.name} not collected: ${s.reason}`);
  const out: CollectedArtifact[] = [];
  for (const file of framed.files) {
    const path = resolve(dir, file.name);
    if (!path.startsWith(`${resolve(dir)}${sep}`)) continue;
    try {
      await mkdir(dirname(path), { recursive: true });
      await writeFile(path, file.bytes);
    } catch (err) {
      system(`Artifact ${file.name} not collected: ${(err as Error).message}`);
      continue;
    }
    out.push({ kind: guessArtifactKind(file.name), name: file.name, path, digest: contentDigest(file.bytes), sizeBytes: file.bytes.length, mediaType: guessMediaType(file.name) });
  }
  if (out.length > 0) system(`Collected ${out.length} artifact${out.length === 1 ? "" : "s"} from the pod: ${out.map((a) => a.name).join(", ")}`);
  return out;
}

/** The client-node implementation of KubeApi; `config` is a kubeconfig path or "in-cluster". */
export function createKubeLauncher(opts: { config: string; image: string }): KubeLauncher {
  let api: Promise<KubeApi> | undefined;
  const load = async (): Promise<KubeApi> => {
    const k8s = await import("@kubernetes/client-node");
    const kc = new k8s.KubeConfig();
    if (opts.config === "in-cluster") kc.loadFromCluster();
    else kc.loadFromFile(opts.config);
    const batch = kc.makeApiClient(k8s.BatchV1Api);
    const core = kc.makeApiClient(k8s.CoreV1Api);
    const net = kc.makeApiClient(k8s.NetworkingV1Api);
    return {
      async createNetworkPolicy(policy) {
        await net.createNamespacedNetworkPolicy({ namespace: policy.metadata.namespace, body: policy as never });
      },
      async deleteNetworkPolicy(namespace, name) {
        await net.deleteNamespacedNetworkPolicy({ name, namespace });
      },
      async createConfigMap(namespace, name, data, labels) {
        await core.createNamespacedConfigMap({ namespace, body: { metadata: { name, namespace, labels }, data } });
      },
      async createJob(manifest) {
        await batch.createNamespacedJob({ namespace: manifest.metadata.namespace, body: manifest as never });
      },
      async jobState(namespace, name) {
        const job = await batch.readNamespacedJobStatus({ name, namespace });
        if ((job.status?.succeeded ?? 0) > 0) return "succeeded";
        if ((job.status?.failed ?? 0) > 0) return "failed";
        return (job.status?.active ?? 0) > 0 ? "active" : "pending";
      },
      async podLog(namespace, jobName) {
        const pods = await core.listNamespacedPod({ namespace, labelSelector: `job-name=${jobName}` });
        const pod = pods.items[0]?.metadata?.name;
        return pod ? await core.readNamespacedPodLog({ name: pod, namespace }) : null;
      },
      async deleteJob(namespace, name) {
        await batch.deleteNamespacedJob({ name, namespace, propagationPolicy: "Background" });
      },
      async deleteConfigMap(namespace, name) {
        await core.deleteNamespacedConfigMap({ name, namespace });
      },
    };
  };
  return {
    adapterFor(claim, spec) {
      const lazy: KubeApi = {
        createConfigMap: async (...a) => (await (api ??= load())).createConfigMap(...a),
        createJob: async (...a) => (await (api ??= load())).createJob(...a),
        jobState: async (...a) => (await (api ??= load())).jobState(...a),
        podLog: async (...a) => (await (api ??= load())).podLog(...a),
        deleteJob: async (...a) => (await (api ??= load())).deleteJob(...a),
        deleteConfigMap: async (...a) => (await (api ??= load())).deleteConfigMap(...a),
        createNetworkPolicy: async (...a) => (await (api ??= load())).createNetworkPolicy(...a),
        deleteNetworkPolicy: async (...a) => (await (api ??= load())).deleteNetworkPolicy(...a),
      };
      return createKubernetesAdapter({ api: lazy, claim, spec, image: opts.image });
    },
  };
}
