import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gunzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { auditProductionDependencies } from "./audit.mjs";

// The real `npm audit` against a test double of the registry's two audit endpoints (this machine
// cannot reach the real advisory service): POST /-/npm/v1/security/advisories/bulk, gzipped
// `{ name: [versions] }` in, `{ name: [advisory] }` out; GET /<name>, the packument npm reads
// to work out which versions an advisory covers.

type Advisory = { title: string; severity: "low" | "moderate" | "high" | "critical"; vulnerable_versions: string };
type Answer = { advisories: Record<string, Advisory[]> } | { status: number } | { garbage: string };

class FakeAdvisoryRegistry {
  answer: Answer = { advisories: {} };
  asked: Record<string, string[]>[] = [];
  private server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      if (req.method === "POST" && req.url === "/-/npm/v1/security/advisories/bulk") {
        const body = Buffer.concat(chunks);
        this.asked.push(JSON.parse((req.headers["content-encoding"] === "gzip" ? gunzipSync(body) : body).toString()));
        if ("status" in this.answer) return res.writeHead(this.answer.status, { allow: "GET,HEAD" }).end();
        if ("garbage" in this.answer) return res.writeHead(200, { "content-type": "application/json" }).end(this.answer.garbage);
        const found = Object.fromEntries(
          Object.entries(this.answer.advisories).map(([name, list]) => [
            name,
            list.map((a, i) => ({ id: 1000 + i, url: `https://advisories.test/${name}/${i}`, cwe: [], cvss: { score: 0, vectorString: null }, ...a })),
          ]),
        );
        return res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(found));
      }
      const name = decodeURIComponent((req.url ?? "/").slice(1));
      const versions = Object.fromEntries(["1.0.0", "2.0.0"].map((version) => [version, { name, version }]));
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ name, "dist-tags": { latest: "2.0.0" }, versions }));
    });
  });
  url = "";
  async start() {
    await new Promise<void>((resolve) => this.server.listen(0, "127.0.0.1", resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/`;
  }
  stop() {
    return new Promise((resolve) => this.server.close(resolve));
  }
}

const registry = new FakeAdvisoryRegistry();
let project: string;

beforeAll(async () => {
  await registry.start();
  // A project with one production and one development dependency, as a lockfile (npm audit reads
  // the tree from it; nothing is installed).
  project = mkdtempSync(join(tmpdir(), "airlock-audit-"));
  const deps = { dependencies: { "fx-prod": "1.0.0" }, devDependencies: { "fx-dev": "1.0.0" } };
  writeFileSync(join(project, "package.json"), JSON.stringify({ name: "fx", version: "1.0.0", ...deps }));
  writeFileSync(
    join(project, "package-lock.json"),
    JSON.stringify({
      name: "fx",
      version: "1.0.0",
      lockfileVersion: 3,
      requires: true,
      packages: {
        "": { name: "fx", version: "1.0.0", ...deps },
        "node_modules/fx-prod": { version: "1.0.0" },
        "node_modules/fx-dev": { version: "1.0.0", dev: true },
      },
    }),
  );
});

afterAll(async () => {
  await registry.stop();
  rmSync(project, { recursive: true, force: true });
});

// .ci/run installs with npm_config_audit=false: the audit must run all the same.
const audit = () =>
  auditProductionDependencies({ cwd: project, registry: registry.url, env: { ...process.env, npm_config_audit: "false", npm_config_update_notifier: "false" } });

describe("auditProductionDependencies", () => {
  it("fails on a high advisory in a production dependency, naming it", async () => {
    registry.answer = { advisories: { "fx-prod": [{ title: "Prototype pollution", severity: "high", vulnerable_versions: "<2.0.0" }] } };
    const r = await audit();
    expect(r.status).toBe("failed");
    expect(r.findings).toEqual(["fx-prod (high, vulnerable 1.0.0): Prototype pollution (https://advisories.test/fx-prod/0)"]);
    expect(r.summary).toBe("production dependencies: 0 critical, 1 high, 0 moderate, 0 low");
  });

  it("fails on a critical one", async () => {
    registry.answer = { advisories: { "fx-prod": [{ title: "Remote code execution", severity: "critical", vulnerable_versions: "*" }] } };
    expect(await audit()).toMatchObject({ status: "failed", findings: ["fx-prod (critical, vulnerable *): Remote code execution (https://advisories.test/fx-prod/0)"] });
  });

  it("never asks about development dependencies, so their advisories pass", async () => {
    registry.asked = [];
    registry.answer = { advisories: { "fx-dev": [{ title: "ReDoS", severity: "critical", vulnerable_versions: "*" }] } };
    expect((await audit()).status).toBe("ok");
    expect(registry.asked).toEqual([{ "fx-prod": ["1.0.0"] }]);
  });

  it("passes below high, and says what it found", async () => {
    registry.answer = { advisories: { "fx-prod": [{ title: "Information exposure", severity: "moderate", vulnerable_versions: "<2.0.0" }] } };
    expect(await audit()).toEqual({ status: "ok", summary: "production dependencies: 0 critical, 0 high, 1 moderate, 0 low", findings: [] });
  });

  it("passes an advisory for versions not installed", async () => {
    registry.answer = { advisories: { "fx-prod": [{ title: "Old bug", severity: "critical", vulnerable_versions: "<1.0.0" }] } };
    expect((await audit()).status).toBe("ok");
  });

  it("says the endpoint could not be asked when it refuses the method (what this machine's registry answers)", async () => {
    registry.answer = { status: 405 };
    const r = await audit();
    expect(r.status).toBe("unavailable");
    expect(r.summary).toMatch(/^the registry's advisory endpoint could not be asked: 405 Method Not Allowed - POST http:\/\/127\.0\.0\.1:\d+\/-\/npm\/v1\/security\/advisories\/bulk$/);
  });

  it("never passes when the answer is not an advisory report", async () => {
    registry.answer = { garbage: "<html>captive portal</html>" };
    expect((await audit()).status).not.toBe("ok");
  });

  it("fails, rather than skips, when npm itself cannot audit (no lockfile)", async () => {
    const bare = mkdtempSync(join(tmpdir(), "airlock-audit-nolock-"));
    try {
      writeFileSync(join(bare, "package.json"), JSON.stringify({ name: "bare", version: "1.0.0", dependencies: { "fx-prod": "1.0.0" } }));
      const r = await auditProductionDependencies({ cwd: bare, registry: registry.url });
      expect(r).toMatchObject({ status: "failed", summary: "npm audit failed: ENOLOCK: This command requires an existing lockfile." });
    } finally {
      rmSync(bare, { recursive: true, force: true });
    }
  });

  it("says so when the registry is unreachable", async () => {
    const r = await auditProductionDependencies({ cwd: project, registry: "http://127.0.0.1:9/" });
    expect(r.status).toBe("unavailable");
    expect(r.summary).toContain("ECONNREFUSED");
  });
});
