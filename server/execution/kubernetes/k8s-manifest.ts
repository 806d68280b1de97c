import { createHash } from "node:crypto";
import type { TrustTier } from "@/server/db/generated/enums";
import { AppError } from "@/server/errors";

// Renders the Kubernetes batch/v1 Job that runs one attempt on a `kubernetes`
// runner pool. Pure: the caller (runner selection + admission) decides the pool,
// service account and grants; this function turns them into a locked-down pod
// and refuses, rather than renders, anything that would hand an untrusted pool a
// privileged service account, secret or config.

export type K8sQuantities = { cpu?: string; memory?: string; ephemeralStorage?: string };

export type K8sSecretGrant = {
  /** Variable name inside the pod. */
  envName: string;
  secretName: string;
  key: string;
  privileged: boolean;
  trustedPoolsOnly: boolean;
};

export type K8sConfigGrant = { envName: string; configMapName: string; key: string; trustedPoolsOnly: boolean };

export type K8sJobInput = {
  runId: string;
  attemptId: string;
  attemptNumber: number;
  namespace: string;
  image: string;
  /** argv of the agent command in the image. */
  command: string[];
  pool: { name: string; trustTier: TrustTier };
  /** The runner service account the runner-selection policy chose. */
  serviceAccount: { name: string; privileged: boolean };
  wallClockMs: number;
  resources?: { requests?: K8sQuantities; limits?: K8sQuantities };
  /** Plain, non-secret settings. */
  env?: Record<string, string>;
  grantedSecrets?: K8sSecretGrant[];
  grantedConfigs?: K8sConfigGrant[];
  /** A ConfigMap holding prompt.md and context.json, mounted read-only at /airlock/input. */
  inputConfigMap?: string;
  ttlSecondsAfterFinished?: number;
  runAsUser?: number;
  /** The pool's sandbox limits: memory and disk become the container's limits. */
  limits?: { memoryMb: number; diskMb: number };
  /** `restricted`: the pod reaches out through the namespace's egress proxy (see k8s-network-policy.ts). */
  network?: "none" | "restricted" | "open";
};

type EnvVar =
  | { name: string; value: string }
  | { name: string; valueFrom: { secretKeyRef: { name: string; key: string; optional: false } } }
  | { name: string; valueFrom: { configMapKeyRef: { name: string; key: string; optional: false } } };

export type K8sJobManifest = {
  apiVersion: "batch/v1";
  kind: "Job";
  metadata: { name: string; namespace: string; labels: Record<string, string>; annotations: Record<string, string> };
  spec: {
    backoffLimit: 0;
    activeDeadlineSeconds: number;
    ttlSecondsAfterFinished: number;
    template: {
      metadata: { labels: Record<string, string> };
      spec: {
        restartPolicy: "Never";
        serviceAccountName: string;
        automountServiceAccountToken: boolean;
        enableServiceLinks: false;
        securityContext: Record<string, unknown>;
        containers: Array<{
          name: string;
          image: string;
          imagePullPolicy: "IfNotPresent";
          command: string[];
          workingDir: string;
          env: EnvVar[];
          resources: { requests: Record<string, string>; limits: Record<string, string> };
          securityContext: Record<string, unknown>;
          volumeMounts: Array<{ name: string; mountPath: string; readOnly?: boolean }>;
        }>;
        volumes: Array<Record<string, unknown>>;
      };
    };
  };
};

export const defaultResources = {
  requests: { cpu: "500m", memory: "1Gi", ephemeralStorage: "2Gi" },
  limits: { cpu: "2", memory: "4Gi", ephemeralStorage: "10Gi" },
} as const;

const dnsLabel = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const envName = /^[A-Za-z_][A-Za-z0-9_]*$/;
const quantity = /^[0-9]+(\.[0-9]+)?(m|k|M|G|T|Ki|Mi|Gi|Ti)?$/;
const reservedEnv = new Set(["HOME", "AIRLOCK_ARTIFACTS_DIR", "AIRLOCK_WORKSPACE_DIR", "AIRLOCK_RUN_ID", "AIRLOCK_ATTEMPT_ID"]);

const invalid = (message: string) => new AppError("BAD_REQUEST", message, { reason: "invalid_manifest" });
const refused = (message: string) => new AppError("FORBIDDEN", message, { reason: "untrusted_privileged" });

const shortHash = (value: string) => createHash("sha256").update(value).digest("hex").slice(0, 8);

/** A DNS-1123 label (≤ 63 characters) naming the attempt's Job; stable for the same ids. */
export function jobName(runId: string, attemptId: string): string {
  const clean = (s: string) => s.toLowerCase().replace(/[^a-z0-9-]+/g, "-").replace(/^-+|-+$/g, "");
  const full = `airlock-${clean(runId)}-${clean(attemptId)}`.replace(/-+/g, "-");
  if (full.length <= 63) return full;
  // Too long: keep a readable prefix and make it unique with a hash of the ids.
  return `${full.slice(0, 54).replace(/-+$/, "")}-${shortHash(`${runId}/${attemptId}`)}`;
}

/** A label value: ≤ 63 characters of [A-Za-z0-9._-], starting and ending alphanumeric. */
export function labelValue(value: string): string {
  const clean = value.replace(/[^A-Za-z0-9._-]+/g, "-");
  const cut = clean.length <= 63 ? clean : `${clean.slice(0, 54)}-${shortHash(value)}`;
  return cut.replace(/^[^A-Za-z0-9]+|[^A-Za-z0-9]+$/g, "");
}

function quantities(q: K8sQuantities, what: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(q)) {
    if (value === undefined) continue;
    if (!quantity.test(value)) throw invalid(`${what}.${key} "${value}" is not a Kubernetes quantity`);
    out[key === "ephemeralStorage" ? "ephemeral-storage" : key] = value;
  }
  return out;
}

export function renderAttemptJob(input: K8sJobInput): K8sJobManifest {
  const untrusted = input.pool.trustTier === "untrusted";
  const secrets = input.grantedSecrets ?? [];
  const configs = input.grantedConfigs ?? [];

  // Trust first: these are policy violations, not typos.
  if (untrusted) {
    if (input.serviceAccount.privileged) {
      throw refused(`The untrusted pool ${input.pool.name} cannot run as the privileged service account ${input.serviceAccount.name}`);
    }
    const secret = secrets.find((s) => s.privileged || s.trustedPoolsOnly);
    if (secret) {
      const why = secret.privileged ? "privileged" : "granted to trusted pools only";
      throw refused(`The untrusted pool ${input.pool.name} cannot receive the secret ${secret.secretName} (${why})`);
    }
    const config = configs.find((c) => c.trustedPoolsOnly);
    if (config) {
      throw refused(`The untrusted pool ${input.pool.name} cannot receive the config ${config.configMapName} (trusted pools only)`);
    }
  }

  if (!dnsLabel.test(input.namespace)) throw invalid(`namespace "${input.namespace}" is not a DNS label`);
  if (!dnsLabel.test(input.serviceAccount.name)) throw invalid(`service account "${input.serviceAccount.name}" is not a DNS label`);
  if (!input.image.trim()) throw invalid("image is required");
  if (input.command.length === 0 || input.command.some((a) => a.length === 0)) throw invalid("command must be a non-empty argv");
  if (!(input.wallClockMs > 0)) throw invalid("the wall-clock limit must be positive");

  const proxy = input.network === "restricted" ? `http://airlock-egress-proxy.${input.namespace}:3128` : null;
  const env: EnvVar[] = [
    ...(proxy ? ["HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy"].map((name) => ({ name, value: proxy })) : []),
    { name: "HOME", value: "/home/agent" },
    { name: "AIRLOCK_WORKSPACE_DIR", value: "/workspace" },
    { name: "AIRLOCK_ARTIFACTS_DIR", value: "/artifacts" },
    { name: "AIRLOCK_RUN_ID", value: input.runId },
    { name: "AIRLOCK_ATTEMPT_ID", value: input.attemptId },
  ];
  if (input.inputConfigMap) {
    env.push(
      { name: "AIRLOCK_PROMPT_FILE", value: "/airlock/input/prompt.md" },
      { name: "AIRLOCK_CONTEXT_FILE", value: "/airlock/input/context.json" },
    );
  }
  const seen = new Set(env.map((e) => e.name));
  const add = (name: string, variable: EnvVar) => {
    if (!envName.test(name)) throw invalid(`invalid environment variable name "${name}"`);
    if (reservedEnv.has(name) || name.startsWith("AIRLOCK_")) throw invalid(`${name} is set by Airlock`);
    if (seen.has(name)) throw invalid(`environment variable ${name} is set twice`);
    seen.add(name);
    env.push(variable);
  };
  for (const [name, value] of Object.entries(input.env ?? {})) add(name, { name, value });
  for (const s of secrets) {
    add(s.envName, { name: s.envName, valueFrom: { secretKeyRef: { name: s.secretName, key: s.key, optional: false } } });
  }
  for (const c of configs) {
    add(c.envName, { name: c.envName, valueFrom: { configMapKeyRef: { name: c.configMapName, key: c.key, optional: false } } });
  }

  const labels = {
    "app.kubernetes.io/name": "airlock-agent",
    "app.kubernetes.io/managed-by": "airlock",
    "airlock.dev/run-id": labelValue(input.runId),
    "airlock.dev/attempt-id": labelValue(input.attemptId),
    "airlock.dev/attempt-number": String(input.attemptNumber),
    "airlock.dev/pool": labelValue(input.pool.name),
    "airlock.dev/trust-tier": input.pool.trustTier,
  };
  const uid = input.runAsUser ?? 1000;
  const poolLimits: K8sQuantities = input.limits ? { memory: `${input.limits.memoryMb}Mi`, ephemeralStorage: `${input.limits.diskMb}Mi` } : {};
  const scratch = (name: string, sizeLimit: string) => ({ name, emptyDir: { sizeLimit } });

  return {
    apiVersion: "batch/v1",
    kind: "Job",
    metadata: {
      name: jobName(input.runId, input.attemptId),
      namespace: input.namespace,
      labels,
      // Labels are cut to 63 characters; the exact ids live here.
      annotations: { "airlock.dev/run-id": input.runId, "airlock.dev/attempt-id": input.attemptId },
    },
    spec: {
      // One attempt = one pod: retries are new attempts that Airlock decides on, never Kubernetes.
      backoffLimit: 0,
      activeDeadlineSeconds: Math.ceil(input.wallClockMs / 1000),
      ttlSecondsAfterFinished: input.ttlSecondsAfterFinished ?? 3600,
      template: {
        metadata: { labels },
        spec: {
          restartPolicy: "Never",
          serviceAccountName: input.serviceAccount.name,
          // No API credentials unless the policy gave this trusted attempt a privileged account.
          automountServiceAccountToken: !untrusted && input.serviceAccount.privileged,
          // Service env vars would reveal the cluster's services to the agent.
          enableServiceLinks: false,
          securityContext: {
            runAsNonRoot: true,
            runAsUser: uid,
            runAsGroup: uid,
            fsGroup: uid,
            seccompProfile: { type: "RuntimeDefault" },
          },
          containers: [
            {
              name: "agent",
              image: input.image,
              imagePullPolicy: "IfNotPresent",
              command: input.command,
              workingDir: "/workspace",
              env,
              resources: {
                requests: quantities({ ...defaultResources.requests, ...input.resources?.requests }, "requests"),
                limits: quantities({ ...defaultResources.limits, ...poolLimits, ...input.resources?.limits }, "limits"),
              },
              securityContext: {
                privileged: false,
                allowPrivilegeEscalation: false,
                // Writable paths are the scratch volumes below; the image stays immutable.
                readOnlyRootFilesystem: true,
                runAsNonRoot: true,
                capabilities: { drop: ["ALL"] },
              },
              volumeMounts: [
                { name: "workspace", mountPath: "/workspace" },
                { name: "artifacts", mountPath: "/artifacts" },
                { name: "home", mountPath: "/home/agent" },
                { name: "tmp", mountPath: "/tmp" },
                ...(input.inputConfigMap ? [{ name: "input", mountPath: "/airlock/input", readOnly: true }] : []),
              ],
            },
          ],
          volumes: [
            scratch("workspace", input.limits ? `${input.limits.diskMb}Mi` : "8Gi"),
            scratch("artifacts", "512Mi"),
            scratch("home", "1Gi"),
            scratch("tmp", "2Gi"),
            ...(input.inputConfigMap ? [{ name: "input", configMap: { name: input.inputConfigMap } }] : []),
          ],
        },
      },
    },
  };
}
