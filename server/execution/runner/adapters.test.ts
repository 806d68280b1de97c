import { describe, expect, it } from "vitest";
import type { AdmissionDecision } from "@/server/domain/pools/admission";
import { defaultSandboxLimits } from "@/server/execution/sandbox/policy";
import { sandboxFor } from "./adapters";

// Which hosts an attempt's sandbox lets through: the pool's, plus the host of a granted
// *_BASE_URL (a gateway the stack points its agent at), except the model's own base URL when
// Airlock's model gateway carries the model calls from outside the sandbox.

const admission = {
  sandbox: { kind: "bubblewrap", reason: null, network: { mode: "restricted", allowedHosts: ["registry.npmjs.org:443"] }, limits: defaultSandboxLimits },
} as unknown as AdmissionDecision;
const env = { ANTHROPIC_BASE_URL: "https://llm-gateway.example", SENTRY_BASE_URL: "https://sentry.example:8443", CI_TOKEN: "x" };

const hosts = (modelGateway: boolean) => {
  const s = sandboxFor({ admission, env, dataDir: "/tmp/airlock-data", workspace: null, modelGateway });
  return s.kind === "bubblewrap" ? s.network.allowedHosts : [];
};

describe("sandboxFor: allowed hosts", () => {
  it("a command agent that calls its model itself may reach the model's base URL", () => {
    expect(hosts(false)).toEqual(["registry.npmjs.org:443", "llm-gateway.example:443", "sentry.example:8443"]);
  });

  it("an agent whose model calls go through Airlock's gateway does not reach the model's host itself", () => {
    expect(hosts(true)).toEqual(["registry.npmjs.org:443", "sentry.example:8443"]);
  });
});
