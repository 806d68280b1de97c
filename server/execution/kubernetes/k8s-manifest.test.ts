import { describe, expect, it } from "vitest";
import { AppError } from "@/server/errors";
import { jobName, type K8sJobInput, labelValue, renderAttemptJob } from "./k8s-manifest";

const base: K8sJobInput = {
  runId: "cm8x2k1qz0001abcd1234efgh",
  attemptId: "cm8x2k1qz0002abcd1234efgh",
  attemptNumber: 2,
  namespace: "airlock-runners",
  image: "ghcr.io/example/agent:1.4.0",
  command: ["claude", "-p", "--output-format", "stream-json", "--verbose"],
  pool: { name: "trusted-k8s", trustTier: "trusted" },
  serviceAccount: { name: "runner-trusted", privileged: false },
  wallClockMs: 30 * 60 * 1000 + 1,
};

const untrusted: K8sJobInput = {
  ...base,
  pool: { name: "untrusted-k8s", trustTier: "untrusted" },
  serviceAccount: { name: "runner-sandbox", privileged: false },
};

const secret = (over: Partial<NonNullable<K8sJobInput["grantedSecrets"]>[number]> = {}) => ({
  envName: "ANTHROPIC_API_KEY",
  secretName: "anthropic",
  key: "api-key",
  privileged: false,
  trustedPoolsOnly: false,
  ...over,
});

function refusal(input: K8sJobInput): AppError {
  try {
    renderAttemptJob(input);
  } catch (err) {
    if (err instanceof AppError) return err;
    throw err;
  }
  throw new Error("expected renderAttemptJob to refuse");
}

describe("renderAttemptJob", () => {
  it("renders a batch/v1 Job named and labelled by the run and attempt", () => {
    const job = renderAttemptJob(base);
    expect(job.apiVersion).toBe("batch/v1");
    expect(job.kind).toBe("Job");
    expect(job.metadata.name).toBe("airlock-cm8x2k1qz0001abcd1234efgh-cm8x2k1qz0002abcd1234efgh");
    expect(job.metadata.namespace).toBe("airlock-runners");
    expect(job.metadata.labels).toMatchObject({
      "airlock.dev/run-id": base.runId,
      "airlock.dev/attempt-id": base.attemptId,
      "airlock.dev/attempt-number": "2",
      "airlock.dev/trust-tier": "trusted",
    });
    expect(job.spec.template.metadata.labels).toEqual(job.metadata.labels);
    expect(job.metadata.annotations).toEqual({ "airlock.dev/run-id": base.runId, "airlock.dev/attempt-id": base.attemptId });
  });

  it("never retries in Kubernetes, stops at the wall-clock limit and cleans up after itself", () => {
    const { spec } = renderAttemptJob(base);
    expect(spec.backoffLimit).toBe(0);
    expect(spec.activeDeadlineSeconds).toBe(1801); // rounded up, never shorter than the limit
    expect(spec.ttlSecondsAfterFinished).toBe(3600);
    expect(spec.template.spec.restartPolicy).toBe("Never");
    expect(renderAttemptJob({ ...base, ttlSecondsAfterFinished: 60 }).spec.ttlSecondsAfterFinished).toBe(60);
  });

  it("runs as the policy-selected service account, locked down", () => {
    const pod = renderAttemptJob(base).spec.template.spec;
    expect(pod.serviceAccountName).toBe("runner-trusted");
    // No API token for an unprivileged account, even on a trusted pool; a privileged one gets it.
    expect(pod.automountServiceAccountToken).toBe(false);
    expect(renderAttemptJob({ ...base, serviceAccount: { ...base.serviceAccount, privileged: true } }).spec.template.spec.automountServiceAccountToken).toBe(true);
    expect(pod.enableServiceLinks).toBe(false);
    expect(pod.securityContext).toMatchObject({ runAsNonRoot: true, runAsUser: 1000, seccompProfile: { type: "RuntimeDefault" } });
    const [container] = pod.containers;
    expect(container?.securityContext).toEqual({
      privileged: false,
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      runAsNonRoot: true,
      capabilities: { drop: ["ALL"] },
    });
    // A read-only root needs writable scratch space for the workspace, artifacts, HOME and /tmp.
    expect(container?.volumeMounts.map((m) => m.mountPath)).toEqual(["/workspace", "/artifacts", "/home/agent", "/tmp"]);
    expect(pod.volumes.every((v) => "emptyDir" in v)).toBe(true);
    expect(container?.command).toEqual(base.command);
  });

  it("sets resource requests and limits, with defaults and overrides", () => {
    const [container] = renderAttemptJob({ ...base, resources: { limits: { memory: "8Gi" } } }).spec.template.spec.containers;
    expect(container?.resources).toEqual({
      requests: { cpu: "500m", memory: "1Gi", "ephemeral-storage": "2Gi" },
      limits: { cpu: "2", memory: "8Gi", "ephemeral-storage": "10Gi" },
    });
    expect(refusal({ ...base, resources: { requests: { cpu: "lots" } } })).toMatchObject({
      code: "BAD_REQUEST",
      message: 'requests.cpu "lots" is not a Kubernetes quantity',
    });
  });

  it("passes granted secrets only as secretKeyRef, and plain settings as values", () => {
    const [container] = renderAttemptJob({
      ...base,
      env: { LOG_LEVEL: "debug" },
      grantedSecrets: [secret(), secret({ envName: "NPM_TOKEN", secretName: "npm", key: "token", privileged: true })],
      grantedConfigs: [{ envName: "REGISTRY_URL", configMapName: "registry", key: "url", trustedPoolsOnly: true }],
    }).spec.template.spec.containers;
    const env = container?.env ?? [];
    expect(env).toContainEqual({ name: "LOG_LEVEL", value: "debug" });
    expect(env).toContainEqual({
      name: "ANTHROPIC_API_KEY",
      valueFrom: { secretKeyRef: { name: "anthropic", key: "api-key", optional: false } },
    });
    expect(env).toContainEqual({ name: "NPM_TOKEN", valueFrom: { secretKeyRef: { name: "npm", key: "token", optional: false } } });
    expect(env).toContainEqual({
      name: "REGISTRY_URL",
      valueFrom: { configMapKeyRef: { name: "registry", key: "url", optional: false } },
    });
    const secretRefs = env.filter((e) => "valueFrom" in e && "secretKeyRef" in e.valueFrom);
    expect(secretRefs.map((e) => e.name)).toEqual(["ANTHROPIC_API_KEY", "NPM_TOKEN"]);
  });

  it("mounts the prompt and context read-only when given", () => {
    const pod = renderAttemptJob({ ...base, inputConfigMap: "run-abc-input" }).spec.template.spec;
    expect(pod.containers[0]?.volumeMounts).toContainEqual({ name: "input", mountPath: "/airlock/input", readOnly: true });
    expect(pod.volumes).toContainEqual({ name: "input", configMap: { name: "run-abc-input" } });
    expect(pod.containers[0]?.env).toContainEqual({ name: "AIRLOCK_CONTEXT_FILE", value: "/airlock/input/context.json" });
  });
});

describe("renderAttemptJob: untrusted pools", () => {
  it("gets no service account token and only unprivileged secrets", () => {
    const pod = renderAttemptJob({ ...untrusted, grantedSecrets: [secret()] }).spec.template.spec;
    expect(pod.automountServiceAccountToken).toBe(false);
    expect(pod.serviceAccountName).toBe("runner-sandbox");
    expect(pod.containers[0]?.env.map((e) => e.name)).toContain("ANTHROPIC_API_KEY");
  });

  it("refuses a privileged service account", () => {
    const err = refusal({ ...untrusted, serviceAccount: { name: "runner-admin", privileged: true } });
    expect(err).toMatchObject({ code: "FORBIDDEN", reason: "untrusted_privileged" });
    expect(err.message).toBe("The untrusted pool untrusted-k8s cannot run as the privileged service account runner-admin");
  });

  it("refuses a privileged secret even when it was passed as granted", () => {
    const err = refusal({ ...untrusted, grantedSecrets: [secret(), secret({ envName: "NPM_TOKEN", secretName: "npm", privileged: true })] });
    expect(err).toMatchObject({ code: "FORBIDDEN", reason: "untrusted_privileged" });
    expect(err.message).toBe("The untrusted pool untrusted-k8s cannot receive the secret npm (privileged)");
  });

  it("refuses secrets and configs granted to trusted pools only", () => {
    expect(refusal({ ...untrusted, grantedSecrets: [secret({ trustedPoolsOnly: true })] }).message).toContain(
      "cannot receive the secret anthropic (granted to trusted pools only)",
    );
    const config = { envName: "X", configMapName: "internal-urls", key: "k", trustedPoolsOnly: true };
    expect(refusal({ ...untrusted, grantedConfigs: [config] }).message).toContain("cannot receive the config internal-urls");
  });
});

describe("renderAttemptJob: invalid input", () => {
  it.each([
    ["a namespace that is not a DNS label", { namespace: "Airlock_Runners" }, 'namespace "Airlock_Runners" is not a DNS label'],
    ["an empty command", { command: [] }, "command must be a non-empty argv"],
    ["an empty image", { image: " " }, "image is required"],
    ["a zero wall-clock limit", { wallClockMs: 0 }, "the wall-clock limit must be positive"],
    ["a bad variable name", { env: { "A-B": "1" } }, 'invalid environment variable name "A-B"'],
    ["a reserved variable", { env: { HOME: "/root" } }, "HOME is set by Airlock"],
    ["an AIRLOCK_ variable", { env: { AIRLOCK_ARTIFACTS_DIR: "/etc" } }, "AIRLOCK_ARTIFACTS_DIR is set by Airlock"],
    ["a variable set twice", { env: { ANTHROPIC_API_KEY: "plain" }, grantedSecrets: [secret()] }, "ANTHROPIC_API_KEY is set twice"],
  ] as const)("refuses %s", (_name, over, message) => {
    expect(refusal({ ...base, ...over } as K8sJobInput)).toMatchObject({ code: "BAD_REQUEST", reason: "invalid_manifest", message: expect.stringContaining(message) });
  });
});

describe("names and labels", () => {
  const dnsLabel = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

  it("makes DNS-safe job names of at most 63 characters, stable and distinct", () => {
    expect(jobName("Run_ABC", "Attempt.1")).toBe("airlock-run-abc-attempt-1");
    const long = jobName("r".repeat(80), "a".repeat(80));
    expect(long.length).toBeLessThanOrEqual(63);
    expect(long).toMatch(dnsLabel);
    expect(jobName("r".repeat(80), "a".repeat(80))).toBe(long);
    expect(jobName("r".repeat(80), `${"a".repeat(79)}b`)).not.toBe(long);
  });

  it("makes valid label values", () => {
    expect(labelValue("pool/with spaces")).toBe("pool-with-spaces");
    expect(labelValue("-edge-")).toBe("edge");
    const long = labelValue("x".repeat(100));
    expect(long.length).toBeLessThanOrEqual(63);
    expect(long).toMatch(/^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/);
  });
});
