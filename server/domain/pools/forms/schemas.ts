// The runner pool, service account and grant forms' schemas: the pools procedures validate with
// these and the forms use the same ones. The trust rules a grant must keep are here too, so the
// form explains a refusal before the server repeats it. Nothing here needs Node.
import { z } from "zod";
import { zTaskKind, zTrustTier } from "@/server/domain/ingest/schemas";

export const POOL_KINDS = ["local", "kubernetes"] as const;

/** A Kubernetes-style name: service accounts and namespaces become real objects on a cluster. */
const zK8sName = z
  .string()
  .trim()
  .min(1, "Required")
  .max(63, "At most 63 characters")
  .regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/, "Lowercase letters, digits and dashes; starts and ends with a letter or digit");

const zTaskKinds = z
  .array(zTaskKind)
  .max(4)
  .refine((kinds) => new Set(kinds).size === kinds.length, "Each task kind once");

/** "" or null: no stack, i.e. every stack. */
const zOptionalStack = z
  .string()
  .nullable()
  .transform((v) => (v === null || v === "" ? null : v));

const zVersionRef = { id: z.string().min(1), expectedVersion: z.int().positive() };

export const zRunnerPoolInput = z.object({
  name: zK8sName,
  trustTier: zTrustTier,
  kind: z.enum(POOL_KINDS),
  concurrency: z.int("A whole number").min(1, "At least 1").max(64, "At most 64"),
  /** Empty: every task kind. */
  allowedTaskKinds: zTaskKinds,
  runtimeServiceAccountId: z.string().min(1, "Pick a service account"),
  runnerServiceAccountId: z.string().min(1, "Pick a service account"),
});
export type RunnerPoolFormValues = z.input<typeof zRunnerPoolInput>;
export const zUpdateRunnerPoolInput = zRunnerPoolInput.extend(zVersionRef);

export const zServiceAccountInput = z.object({
  name: zK8sName,
  namespace: zK8sName,
  privileged: z.boolean(),
  description: z.string().trim().max(300, "At most 300 characters"),
});
export type ServiceAccountFormValues = z.input<typeof zServiceAccountInput>;
export const zUpdateServiceAccountInput = zServiceAccountInput.extend(zVersionRef);

const zSecretName = z
  .string()
  .trim()
  .min(1, "Required")
  .max(253, "At most 253 characters")
  .regex(/^[A-Za-z_][A-Za-z0-9_.-]*$/, "Letters, digits, dot, dash and underscore (the secret's name, never its value)");

/**
 * Why a secret grant breaks the trust rules, or null. A privileged secret reaches trusted pools
 * only (untrusted pools run fork PRs and unverified refs) and only for the task kinds it names.
 */
export function secretGrantProblem(grant: { privileged: boolean; trustedPoolsOnly: boolean; taskKinds: readonly string[] }) {
  if (grant.privileged && !grant.trustedPoolsOnly) {
    return {
      field: "trustedPoolsOnly" as const,
      message:
        "A privileged secret can never be granted to untrusted pools: they run fork pull requests and unverified refs. Keep it on trusted pools only, or mark the secret unprivileged.",
    };
  }
  if (grant.privileged && grant.taskKinds.length === 0) {
    return { field: "taskKinds" as const, message: "A privileged secret must name the task kinds that may receive it." };
  }
  return null;
}

/** The fields alone; the domain checks the trust rules itself (secretGrantProblem) to name the reason. */
export const zSecretGrantFields = z.object({
  secretName: zSecretName,
  stackId: zOptionalStack,
  privileged: z.boolean(),
  trustedPoolsOnly: z.boolean(),
  /** Empty: every task kind. */
  taskKinds: zTaskKinds,
});
const checkSecretGrant = (grant: z.output<typeof zSecretGrantFields>, ctx: z.RefinementCtx) => {
  const problem = secretGrantProblem(grant);
  if (problem) ctx.addIssue({ code: "custom", path: [problem.field], message: problem.message });
};
export const zSecretGrantInput = zSecretGrantFields.superRefine(checkSecretGrant);
export type SecretGrantFormValues = z.input<typeof zSecretGrantInput>;
export const zUpdateSecretGrantFields = zSecretGrantFields.extend(zVersionRef);
export const zUpdateSecretGrantInput = zUpdateSecretGrantFields.superRefine(checkSecretGrant);

export const zConfigGrantInput = z.object({
  configMapName: zK8sName,
  stackId: zOptionalStack,
  trustedPoolsOnly: z.boolean(),
  taskKinds: zTaskKinds,
});
export type ConfigGrantFormValues = z.input<typeof zConfigGrantInput>;
export const zUpdateConfigGrantInput = zConfigGrantInput.extend(zVersionRef);

export const zVersionRefInput = z.object(zVersionRef);
