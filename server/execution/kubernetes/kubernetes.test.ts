import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { contentDigest } from "@/server/lib/digest";
import type { AgentEvent } from "@/server/domain/events/catalogue";
import type { SessionEvent } from "@/server/execution/agents/types";
import type { K8sJobManifest } from "@/server/execution/kubernetes/k8s-manifest";
import type { AdmissionDecision } from "@/server/domain/pools/admission";
import type { ClaimResult } from "@/server/domain/run-engine/claim-attempt";
import { scriptedSpec } from "@/server/queue/testing/fixtures";
import { FRAME_KEY, withArtifactFrames } from "./k8s-artifacts";
import { createKubernetesAdapter, type KubeApi } from "./kubernetes";

type Claim = Extract<ClaimResult, { kind: "started" }>;

function claim(tier: "trusted" | "untrusted", privileged: boolean): Claim {
  const admission: AdmissionDecision = {
    admitted: true,
    refusal: null,
    trustTier: tier,
    privilegedCredentials: privileged,
    pool: { id: "p1", name: "k8s", trustTier: tier, kind: "kubernetes" },
    runtimeServiceAccount: { name: "agent-runtime", namespace: "agents", privileged },
    runnerServiceAccount: { name: "runner", namespace: "agents", privileged: false },
    secretsGranted: [{ name: "ANTHROPIC_API_KEY", grantId: "g1", privileged: false }],
    secretsDenied: [],
    configMapsGranted: [],
    configMapsDenied: [],
    poolsSkipped: [],
    actor: { label: "rule", verdict: "ok" },
    overrides: [],
    decisionIds: [],
    summary: "",
  };
  const run = {
    id: "run1", number: 1, title: "t", status: "queued", repositoryId: "r", taskKind: "diagnose", isFork: false, originReason: null, actor: "a", actorUserId: null,
    triggerRuleId: "rule", stackId: "s", stackSnapshot: {}, stackDigest: "d", contextBundle: { a: 1 }, contextDigest: "c", prompt: "Fix it",
    promptHash: "h", headSha: "abc", headBranch: "main", admission: null,
    repository: { fullName: "o/n", forge: "github", cloneUrl: "", trustTier: "trusted", defaultBranch: "main", writeBackExceptions: [], botCommentsAllowed: false },
    pullRequest: null,
  } satisfies Claim["run"];
  return {
    kind: "started",
    run,
    attempt: { id: "att1", number: 1, fencingToken: 1 },
    fence: { runId: "run1", attemptId: "att1", fencingToken: 1 },
    admission,
    pool: { id: "p1", name: "k8s", kind: "kubernetes", namespace: "agents" },
  };
}

function fakeCluster(log: string[], finalState: "succeeded" | "failed" | "active") {
  const calls: string[] = [];
  const created: { job?: K8sJobManifest; configMap?: Record<string, string> } = {};
  let polls = 0;
  const api: KubeApi = {
    createConfigMap: async (_ns, name, data) => void (calls.push(`configmap ${name}`), (created.configMap = data)),
    createJob: async (m) => void (calls.push(`job ${m.metadata.name}`), (created.job = m)),
    jobState: async () => (++polls < 3 ? "active" : finalState),
    podLog: async () => log.slice(0, polls + 1).join(""),
    deleteJob: async (_ns, name) => void calls.push(`delete job ${name}`),
    deleteConfigMap: async (_ns, name) => void calls.push(`delete configmap ${name}`),
    createNetworkPolicy: async (p) => void calls.push(`networkpolicy ${p.metadata.name}`),
    deleteNetworkPolicy: async (_ns, name) => void calls.push(`delete networkpolicy ${name}`),
  };
  return { api, calls, created };
}

const event = (e: AgentEvent) => `${JSON.stringify(e)}\n`;
const start = (api: KubeApi, c: Claim, signal?: AbortSignal, wallClockMs = 60_000) =>
  createKubernetesAdapter({ api, claim: c, spec: scriptedSpec({ adapter: { kind: "command", command: ["claude", "-p"], env: [], outputFormat: "airlock" } }), image: "agent:1", pollMs: 5 }).start({
    prompt: "Fix it",
    contextBundle: { a: 1 },
    workspaceDir: "/workspace",
    artifactsDir: "/artifacts",
    env: {},
    limits: { wallClockMs },
    sandbox: { kind: "none", reason: "runs as a Kubernetes Job" },
    signal,
  });

describe("kubernetes attempts", () => {
  it("runs the attempt as a Job with the selected account and streams the pod's log as events", async () => {
    const cluster = fakeCluster([event({ type: "message", payload: { role: "assistant", text: "hello" } }), "plain output\n", event({ type: "cost", payload: { inputTokens: 5, outputTokens: 1 } })], "succeeded");
    const session = await start(cluster.api, claim("trusted", true));
    const events: SessionEvent[] = [];
    for await (const e of session.events) events.push(e);
    const exit = await session.exit;
    expect(exit).toMatchObject({ status: "succeeded", exitCode: 0 });
    expect(cluster.created.job?.spec.template.spec.serviceAccountName).toBe("agent-runtime");
    expect(cluster.created.job?.spec.template.spec.containers[0]?.env).toContainEqual({
      name: "ANTHROPIC_API_KEY",
      valueFrom: { secretKeyRef: { name: "airlock-anthropic-api-key", key: "value", optional: false } },
    });
    expect(cluster.created.configMap).toEqual({ "prompt.md": "Fix it", "context.json": '{"a":1}' });
    expect(events.map((e) => e.type)).toEqual(expect.arrayContaining(["message", "log", "cost"]));
    expect(events.find((e) => e.type === "message")).toMatchObject({ payload: { text: "hello" } });
    // The run view is told what contains the pod.
    const sandboxSeen = events.find((e) => e.type === "sandbox")?.payload;
    expect(sandboxSeen).toMatchObject({ phase: "started", kind: "kubernetes", network: { mode: "restricted" } });
    // The NetworkPolicy exists before the Job (its pod never runs unfenced) and goes last.
    expect(cluster.calls[0]).toBe("networkpolicy airlock-run1-att1");
    expect(cluster.calls.slice(-2)).toEqual([expect.stringMatching(/^delete configmap/), "delete networkpolicy airlock-run1-att1"]);
  });

  it("refuses to start an untrusted pool's Job under a privileged account (renderAttemptJob's guard)", async () => {
    const cluster = fakeCluster([], "succeeded");
    await expect(start(cluster.api, claim("untrusted", true))).rejects.toThrow(/cannot run as the privileged service account/);
    expect(cluster.calls).toEqual([]);
  });

  it("a cluster that is briefly unavailable fails the start transiently (retried); a refusal does not", async () => {
    const unavailable = fakeCluster([], "succeeded");
    unavailable.api.createJob = async () => {
      throw Object.assign(new Error("HTTP-Code: 503 Service Unavailable"), { code: 503 });
    };
    const failed = await start(unavailable.api, claim("trusted", false)).catch((e: unknown) => e);
    expect(failed).toMatchObject({ name: "AgentStartError", transient: true, message: expect.stringMatching(/the cluster refused the Job/) });
    expect(unavailable.calls).toContain("delete configmap airlock-run1-att1-input");

    const forbidden = fakeCluster([], "succeeded");
    forbidden.api.createJob = async () => {
      throw Object.assign(new Error("HTTP-Code: 403 Forbidden"), { code: 403 });
    };
    expect(await start(forbidden.api, claim("trusted", false)).catch((e: unknown) => e)).toMatchObject({ name: "AgentStartError", transient: false });
  });

  it("collects the files the pod framed in its log into the attempt's artifacts folder, with their digests", async () => {
    const patch = "diff --git a/sum.js b/sum.js\n";
    const frames = [
      `${JSON.stringify({ [FRAME_KEY]: "fix.patch", b64: Buffer.from(patch).toString("base64") })}\n`,
      `${JSON.stringify({ [FRAME_KEY]: "fix.patch", end: true })}\n`,
    ];
    const cluster = fakeCluster([event({ type: "message", payload: { role: "assistant", text: "patched" } }), ...frames], "succeeded");
    const dir = await mkdtemp(join(tmpdir(), "airlock-k8s-"));
    try {
      const session = await createKubernetesAdapter({
        api: cluster.api,
        claim: claim("trusted", false),
        spec: scriptedSpec({ adapter: { kind: "command", command: ["claude", "-p"], env: [], outputFormat: "airlock" } }),
        image: "agent:1",
        pollMs: 5,
      }).start({ prompt: "Fix it", contextBundle: {}, workspaceDir: "/workspace", artifactsDir: dir, env: {}, limits: { wallClockMs: 60_000 }, sandbox: { kind: "none", reason: "runs as a Kubernetes Job" } });
      const events: SessionEvent[] = [];
      for await (const e of session.events) events.push(e);
      const exit = await session.exit;
      // The Job runs the agent under the wrapper that prints the frames.
      expect(cluster.created.job?.spec.template.spec.containers[0]?.command).toEqual(withArtifactFrames(["claude", "-p"]));
      expect(exit.artifacts).toEqual([
        { kind: "patch", name: "fix.patch", path: join(dir, "fix.patch"), digest: contentDigest(patch), sizeBytes: patch.length, mediaType: "text/x-diff" },
      ]);
      expect(await readFile(join(dir, "fix.patch"), "utf8")).toBe(patch);
      // Frames are transport, not transcript.
      expect(JSON.stringify(events)).not.toContain(FRAME_KEY);
      expect(events.find((e) => e.type === "message")).toMatchObject({ payload: { text: "patched" } });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("deletes the Job when cancelled or past the wall clock", async () => {
    const cluster = fakeCluster([], "active");
    const abort = new AbortController();
    const session = await start(cluster.api, claim("trusted", false), abort.signal);
    abort.abort("stop");
    expect(await session.exit).toMatchObject({ status: "cancelled" });
    expect(cluster.calls).toContain("delete job airlock-run1-att1");

    const slow = fakeCluster([], "active");
    const timed = await start(slow.api, claim("trusted", false), undefined, 30);
    expect(await timed.exit).toMatchObject({ status: "timed_out" });
    expect(slow.calls.some((c) => c.startsWith("delete job"))).toBe(true);
  });
});
