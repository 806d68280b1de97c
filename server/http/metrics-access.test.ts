import { describe, expect, it } from "vitest";
import { metricsAccess } from "./metrics-access";

const token = "metrics-token-0123456789abcdef";

describe("metricsAccess", () => {
  it("refuses every scrape in production when no token is configured, saying how to set one", () => {
    for (const authorization of [null, "Bearer anything", ""]) {
      expect(metricsAccess({ token: undefined, nodeEnv: "production", authorization })).toEqual({ ok: false, status: 403, message: expect.stringMatching(/AIRLOCK_METRICS_TOKEN/) });
    }
  });

  it("answers development and tests without a token", () => {
    expect(metricsAccess({ token: undefined, nodeEnv: "development", authorization: null })).toEqual({ ok: true });
    expect(metricsAccess({ token: undefined, nodeEnv: "test", authorization: null })).toEqual({ ok: true });
  });

  it("with a token, only the exact bearer token is let in, in every environment", () => {
    for (const nodeEnv of ["production", "development"]) {
      expect(metricsAccess({ token, nodeEnv, authorization: `Bearer ${token}` })).toEqual({ ok: true });
      expect(metricsAccess({ token, nodeEnv, authorization: `bearer ${token}` })).toEqual({ ok: true });
      expect(metricsAccess({ token, nodeEnv, authorization: null })).toMatchObject({ ok: false, status: 401 });
      expect(metricsAccess({ token, nodeEnv, authorization: token })).toMatchObject({ ok: false, status: 401 });
      expect(metricsAccess({ token, nodeEnv, authorization: `Bearer ${token}x` })).toMatchObject({ ok: false, status: 401, message: "Wrong metrics token." });
      expect(metricsAccess({ token, nodeEnv, authorization: `Bearer ${token.slice(0, -1)}` })).toMatchObject({ ok: false, status: 401 });
      expect(metricsAccess({ token, nodeEnv, authorization: "Basic dXNlcjpwYXNz" })).toMatchObject({ ok: false, status: 401 });
    }
  });
});
