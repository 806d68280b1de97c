import { describe, expect, it } from "vitest";
import { checkSameOriginMutation } from "./same-origin";

const req = (headers: Record<string, string>) =>
  new Request("http://localhost:3000/api/trpc/runs.cancel", { method: "POST", headers: { host: "localhost:3000", ...headers } });

describe("checkSameOriginMutation", () => {
  it("accepts a same-origin JSON request", () => {
    expect(checkSameOriginMutation(req({ "content-type": "application/json", origin: "http://localhost:3000", "sec-fetch-site": "same-origin" }))).toEqual({ ok: true });
  });
  it("accepts a JSON request from a non-browser client (no Origin, no Sec-Fetch-Site)", () => {
    expect(checkSameOriginMutation(req({ "content-type": "application/json" }))).toEqual({ ok: true });
  });
  it.each([
    ["a cross-site form post (text/plain, Origin null)", { "content-type": "text/plain", origin: "null", "sec-fetch-site": "cross-site" }],
    ["a url-encoded form", { "content-type": "application/x-www-form-urlencoded", origin: "http://localhost:3000" }],
    ["JSON from another origin", { "content-type": "application/json", origin: "https://evil.example" }],
    ["JSON with Origin null", { "content-type": "application/json", origin: "null" }],
    ["JSON marked cross-site by the browser", { "content-type": "application/json", "sec-fetch-site": "cross-site" }],
    ["JSON from a sibling site", { "content-type": "application/json", "sec-fetch-site": "same-site" }],
  ])("refuses %s", (_name, headers) => {
    expect(checkSameOriginMutation(req(headers))).toMatchObject({ ok: false });
  });
});
