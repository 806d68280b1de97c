import type { AdmissionDecision } from "../pools/admission";
import type { StackSpec } from "../stacks/spec";
import { envVarName, grantedValue } from "@/server/env";

// A Claude Code stack cannot run without its model API key: admission refuses it there, with
// the exact secret and server variable to set, rather than the process failing at start. A fork
// PR's run never receives the key (its code could read it from the agent's environment), so
// such a run of a Claude Code stack is refused too, and says why.

/** Whether a granted secret or config map has a value on this server (never the value itself). */
export type GrantHasValue = (kind: "secret" | "config", name: string) => boolean;

export const serverGrantHasValue: GrantHasValue = (kind, name) => grantedValue(kind, name) !== undefined;

export const modelKeyVariable = (secret: string) => `AIRLOCK_SECRET_${envVarName(secret)}`;

/**
 * The admission with the model API key checked: unchanged for other adapters and for an
 * attempt already refused; otherwise refused, the key withheld, when the run is a fork PR's (or
 * of unknown origin), the key is not granted, or it is granted and has no value.
 */
export function checkModelKey(opts: { decision: AdmissionDecision; spec: StackSpec | null; isFork: boolean | null; stackName: string; hasValue?: GrantHasValue }): AdmissionDecision {
  const { decision, spec } = opts;
  if (!decision.admitted || spec?.adapter.kind !== "claude-code") return decision;
  const secret = spec.adapter.apiKeySecret;
  const hasValue = opts.hasValue ?? serverGrantHasValue;
  const refuse = (refusal: string, keyReason: string): AdmissionDecision => ({
    ...decision,
    admitted: false,
    refusal,
    pool: null,
    runtimeServiceAccount: null,
    runnerServiceAccount: null,
    sandbox: null,
    secretsGranted: [],
    secretsDenied: [
      ...decision.secretsDenied.filter((s) => s.name !== secret),
      { name: secret, reason: keyReason },
      ...decision.secretsGranted.filter((s) => s.name !== secret).map((s) => ({ name: s.name, reason: "the attempt was not admitted" })),
    ],
    configMapsGranted: [],
    configMapsDenied: [...decision.configMapsDenied, ...decision.configMapsGranted.map((c) => ({ name: c.name, reason: "the attempt was not admitted" }))],
    summary: `Refused: ${refusal}`,
  });
  if (opts.isFork !== false) {
    return refuse(
      `a fork PR's run never receives the model API key (secret ${secret}), and ${opts.stackName} runs Claude Code, which needs it; run it from a branch of the repository instead`,
      "the model API key: fork PRs never receive it",
    );
  }
  const denied = decision.secretsDenied.find((s) => s.name === secret);
  if (denied || !decision.secretsGranted.some((s) => s.name === secret)) {
    return refuse(
      `the model API key is not granted: grant the secret ${secret} to ${opts.stackName} (Settings → Runner pools, service accounts and grants)${denied ? `; now ${denied.reason}` : ""}, and set ${modelKeyVariable(secret)} on the Airlock server`,
      denied?.reason ?? "not granted",
    );
  }
  if (!hasValue("secret", secret)) {
    return refuse(
      `the model API key has no value: set ${modelKeyVariable(secret)} on the Airlock server (the secret ${secret}, granted to ${opts.stackName}, is read from it)`,
      `granted, but ${modelKeyVariable(secret)} is not set on the server`,
    );
  }
  const baseUrl = spec.adapter.baseUrlConfigMap;
  if (baseUrl && decision.configMapsGranted.some((c) => c.name === baseUrl) && !hasValue("config", baseUrl)) {
    return refuse(
      `the model API base URL has no value: set AIRLOCK_CONFIG_${envVarName(baseUrl)} on the Airlock server (the config map ${baseUrl}, granted to ${opts.stackName}), or remove it from the stack to use the provider's own address`,
      "the attempt was not admitted",
    );
  }
  return decision;
}
