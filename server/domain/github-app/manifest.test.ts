import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { APP_PERMISSIONS, buildManifest, manifestPostUrl } from "./manifest";

describe("the app manifest", () => {
  it("asks for exactly the permissions the README lists", () => {
    const readme = readFileSync(new URL("../../../README.md", import.meta.url), "utf8");
    for (const [name, p] of Object.entries(APP_PERMISSIONS)) expect(readme).toContain(`| ${name} | ${p.level} | ${p.why} |`);
    expect(buildManifest({ airlockUrl: "https://airlock.example/", name: "A" })).toMatchObject({ public: false, redirect_url: "https://airlock.example/api/github/app/manifest", default_permissions: { metadata: "read", actions: "write" } });
  });
  it("posts to an organisation's new-app page when one is named", () => {
    expect(manifestPostUrl({ githubUrl: "https://github.com", organization: "acme", state: "s" })).toBe("https://github.com/organizations/acme/settings/apps/new?state=s");
  });
});
