import { describe, expect, it } from "vitest";
import type { AdmissionDecision } from "../pools/admission";
import { zStackSpec } from "../stacks/spec";
import { checkModelKey } from "./model-key-admission";

const admitted: AdmissionDecision = {
  admitted: true,
  refusal: null,
  trustTier: "trusted",
  privilegedCredentials: false,
  pool: { id: "p1", name: "local", trustTier: "trusted", kind: "local" },
  runtimeServiceAccount: { name: "rt", namespace: "airlock", privileged: false },
  runnerServiceAccount: { name: "rn", namespace: "airlock", privileged: false },
  sandbox: null,
  secretsGranted: [
    { name: "anthropic-api-key", grantId: "g1", privileged: false },
    { name: "sentry-token", grantId: "g2", privileged: false },
  ],
  secretsDenied: [],
  configMapsGranted: [{ name: "gateway-url", grantId: "c1" }],
  configMapsDenied: [],
  poolsSkipped: [],
  actor: { label: "ada", verdict: "maintainer" },
  overrides: [],
  decisionIds: [],
  summary: "admitted",
};

const claudeSpec = (baseUrlConfigMap?: string) =>
  zStackSpec.parse({ modelProvider: "anthropic", model: "claude-sonnet-4-5", adapter: { kind: "claude-code", baseUrlConfigMap }, promptTemplate: "x" });

describe("checkModelKey", () => {
  it("leaves a scripted or command stack, and an attempt already refused, as they are", () => {
    const scripted = zStackSpec.parse({ modelProvider: "local", model: "scripted", adapter: { kind: "scripted", scenario: "s" }, promptTemplate: "x" });
    expect(checkModelKey({ decision: admitted, spec: scripted, isFork: true, stackName: "s", hasValue: () => false })).toBe(admitted);
    const refused = { ...admitted, admitted: false, refusal: "no pool" };
    expect(checkModelKey({ decision: refused, spec: claudeSpec(), isFork: false, stackName: "s", hasValue: () => false })).toBe(refused);
  });

  it("a key granted and set passes; every grant of a refused attempt is withdrawn", () => {
    expect(checkModelKey({ decision: admitted, spec: claudeSpec(), isFork: false, stackName: "s", hasValue: () => true })).toBe(admitted);
    const d = checkModelKey({ decision: admitted, spec: claudeSpec(), isFork: false, stackName: "diag", hasValue: () => false });
    expect(d).toMatchObject({ admitted: false, pool: null, secretsGranted: [], configMapsGranted: [] });
    expect(d.refusal).toBe("the model API key has no value: set AIRLOCK_SECRET_ANTHROPIC_API_KEY on the Airlock server (the secret anthropic-api-key, granted to diag, is read from it)");
    expect(d.secretsDenied.map((s) => s.name).sort()).toEqual(["anthropic-api-key", "sentry-token"]);
  });

  it("an unknown origin counts as a fork: the key is never handed to it", () => {
    const d = checkModelKey({ decision: admitted, spec: claudeSpec(), isFork: null, stackName: "diag", hasValue: () => true });
    expect(d.admitted).toBe(false);
    expect(d.refusal).toContain("a fork PR's run never receives the model API key");
  });

  it("a granted base URL config map with no value is refused, naming its variable", () => {
    const hasValue = (kind: "secret" | "config") => kind === "secret";
    const d = checkModelKey({ decision: admitted, spec: claudeSpec("gateway-url"), isFork: false, stackName: "diag", hasValue });
    expect(d.refusal).toContain("set AIRLOCK_CONFIG_GATEWAY_URL on the Airlock server");
  });
});
