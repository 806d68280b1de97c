import { readdirSync, readFileSync } from "node:fs";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { failureSignature, locateFirstError } from "./failure-signature";
import { normaliseForSignature, normaliseJobName } from "./normalise";

const LOGS = new URL("./fixtures/logs/", import.meta.url);
const read = (name: string) => readFileSync(new URL(name, LOGS), "utf8");

/** Each group is one failure; the files in a group are that failure on other commits or days. */
const GROUPS: Record<string, { files: string[]; tools: string[]; tests: string[]; error: string }> = {
  "pytest assertion": {
    files: ["pytest-assertion-a.log", "pytest-assertion-b.log"],
    tools: ["pytest"],
    tests: ["tests/test_export.py::test_csv_header"],
    error: "AssertionError: assert ['id', 'name'] == ['id', 'name', 'email']",
  },
  "pytest collection error": {
    files: ["pytest-import-error.log"],
    tools: ["pytest"],
    tests: ["tests/test_api.py"],
    error: "ModuleNotFoundError: No module named 'httpx'",
  },
  "pytest other test in the same file": {
    files: ["pytest-other-test.log"],
    tools: ["pytest"],
    tests: ["tests/test_export.py::test_json_roundtrip"],
    error: "KeyError: 'created_at'",
  },
  "jest snapshot": {
    files: ["jest-snapshot-a.log", "jest-snapshot-b.log"],
    tools: ["jest"],
    tests: ["Button › renders the primary variant"],
    error: "expect(received).toMatchSnapshot()",
  },
  "vitest assertion": {
    files: ["vitest-assert-a.log", "vitest-assert-b.log"],
    tools: ["exception", "vitest"],
    tests: ["src/lib/date.test.ts > formatRelative > formats yesterday"],
    error: "AssertionError: expected 'in 1 day' to be 'yesterday' // Object.is equality",
  },
  "vitest timeout in the same file": {
    files: ["vitest-timeout.log"],
    tools: ["exception", "vitest"],
    tests: ["src/lib/date.test.ts > formatRelative > handles the DST switch"],
    error: "Error: Test timed out in <dur>.",
  },
  "go test": {
    files: ["go-test-a.log", "go-test-b.log"],
    tools: ["go"],
    tests: ["TestServerHandlesShutdown"],
    error: "server_test.go:<line>: expected status 200 after shutdown signal, got 503",
  },
  "go panic": {
    files: ["go-panic.log"],
    tools: ["exception", "go"],
    tests: ["TestCacheEviction"],
    error: "panic: runtime error: invalid memory address or nil pointer dereference",
  },
  "cargo test": {
    files: ["cargo-test-a.log", "cargo-test-b.log"],
    tools: ["cargo"],
    tests: ["parser::tests::parses_nested_arrays"],
    error: "assertion `left == right` failed",
  },
  "cargo compile error": {
    files: ["cargo-compile-error.log"],
    tools: ["cargo"],
    tests: [],
    error: "error[E0308]: mismatched types at src/lexer.rs",
  },
  tsc: {
    files: ["tsc-a.log", "tsc-b.log"],
    tools: ["tsc"],
    tests: [],
    error: "src/server/router.ts:<line>: TS2322: Type 'string | undefined' is not assignable to type 'string'.",
  },
  "eslint unused variable (GitHub-hosted and container runners)": {
    files: ["eslint-a.log", "eslint-b.log"],
    tools: ["eslint"],
    tests: [],
    error: "src/app/page.tsx:<line>: @typescript-eslint/no-unused-vars: 'useState' is defined but never used",
  },
  "eslint hooks rule in the same file": {
    files: ["eslint-hooks.log"],
    tools: ["eslint"],
    tests: [],
    error: expect.stringContaining("react-hooks/exhaustive-deps") as unknown as string,
  },
  "docker build": {
    files: ["docker-build-a.log", "docker-build-b.log"],
    tools: ["docker", "npm"],
    tests: [],
    error: 'docker: process "/bin/sh -c npm ci" did not complete successfully: exit code: 1',
  },
  "kubectl rollout": {
    files: ["deploy-rollout-a.log", "deploy-rollout-b.log"],
    tools: ["deploy", "exception"],
    tests: [],
    error: 'deployment "api" exceeded its progress deadline',
  },
  "helm install": {
    files: ["helm-install.log"],
    tools: ["deploy"],
    tests: [],
    error: expect.stringMatching(/^INSTALLATION FAILED: /) as unknown as string,
  },
  terraform: {
    files: ["terraform-apply.log"],
    tools: ["deploy"],
    tests: [],
    error: expect.stringMatching(/^creating S3 Bucket \(acme-assets-prod\)/) as unknown as string,
  },
  "gcc via make": {
    files: ["make-gcc-a.log", "make-gcc-b.log"],
    tools: ["compiler", "make"],
    tests: [],
    error: "src/util.c:<line>: error: 'buf_len' undeclared (first use in this function); did you mean 'buf_cap'?",
  },
  "npm network": {
    files: ["npm-network.log"],
    tools: ["npm"],
    tests: [],
    error: "npm ERR! code ECONNRESET",
  },
  "unknown tool (tail of the failed step)": {
    files: ["shell-links-a.log", "shell-links-b.log"],
    tools: ["tail"],
    tests: [],
    error: "broken link in docs/install.md -> https://example.invalid/setup",
  },
};

const entries = Object.entries(GROUPS);

describe("failure signature corpus", () => {
  it("has at least 20 logs and every log is in the table", () => {
    const files = readdirSync(LOGS).filter((f) => f.endsWith(".log")).sort();
    expect(files.length).toBeGreaterThanOrEqual(20);
    expect(entries.flatMap(([, g]) => g.files).sort()).toEqual(files);
  });

  describe.each(entries)("%s", (_name, group) => {
    it.each(group.files)("%s: reads the tool, the failing tests and the error", (file) => {
      const result = failureSignature(read(file));
      expect(result.signature).toMatch(/^[0-9a-f]{16}$/);
      expect(result.tools).toEqual(group.tools);
      expect(result.failingTests).toEqual(group.tests);
      expect(result.errorLines).toContainEqual(group.error);
    });

    if (group.files.length > 1) {
      it("is stable across commits, times, paths and line numbers", () => {
        const signatures = new Set(group.files.map((f) => failureSignature(read(f)).signature));
        expect(signatures.size).toBe(1);
      });
    }
  });

  it("separates every different failure", () => {
    const bySignature = new Map<string, string>();
    for (const [name, group] of entries) {
      const signature = failureSignature(read(group.files[0] ?? "")).signature;
      expect(bySignature.get(signature), `${name} collides`).toBeUndefined();
      bySignature.set(signature, name);
    }
    expect(bySignature.size).toBe(entries.length);
  });

  it("locates the first failure line for excerpts", () => {
    const log = read("pytest-assertion-a.log");
    const line = locateFirstError(log);
    expect(line).not.toBeNull();
    expect(log.split("\n")[(line ?? 0) - 1]).toContain("E       AssertionError");
    expect(locateFirstError(read("shell-links-a.log"))).toBeNull();
  });
});

describe("failureSignature options and edges", () => {
  const log = read("go-test-a.log");

  it("mixes the job name in, without its matrix suffix", () => {
    const plain = failureSignature(log).signature;
    const node18 = failureSignature(log, { jobName: "test (ubuntu-latest, 18)" }).signature;
    const node20 = failureSignature(log, { jobName: "test (ubuntu-latest, 20)" }).signature;
    const lint = failureSignature(log, { jobName: "integration" }).signature;
    expect(node18).toBe(node20);
    expect(node18).not.toBe(plain);
    expect(lint).not.toBe(node18);
  });

  it("ignores ANSI colour codes", () => {
    const coloured = log.replace("--- FAIL", "\x1b[31m--- FAIL\x1b[0m");
    expect(failureSignature(coloured).signature).toBe(failureSignature(log).signature);
  });

  it("handles an empty log", () => {
    expect(failureSignature("")).toMatchObject({ failingTests: [], errorLines: [], firstErrorLine: null });
  });

  it("limits the error lines it hashes", () => {
    const many = Array.from({ length: 30 }, (_, i) => `src/f${i}.c:1:1: error: bad thing number ${i}`).join("\n");
    expect(failureSignature(many, { maxErrorLines: 3 }).errorLines).toHaveLength(3);
  });

  it("does not depend on the order parallel workers print failures in", () => {
    const a = "--- FAIL: TestA (0.1s)\n--- FAIL: TestB (0.2s)\n";
    const b = "--- FAIL: TestB (0.3s)\n--- FAIL: TestA (0.1s)\n";
    expect(failureSignature(a).signature).toBe(failureSignature(b).signature);
  });

  it("keeps the same signature when SHAs, runner timestamps and durations change (property)", () => {
    const base = read("cargo-test-a.log");
    const expected = failureSignature(base).signature;
    const hex40 = fc.string({ unit: fc.constantFrom(..."0123456789abcdef"), minLength: 40, maxLength: 40 }).filter((s) => /\d/.test(s) && /[a-f]/.test(s));
    fc.assert(
      fc.property(hex40, fc.integer({ min: 0, max: 10_000_000 }), fc.float({ min: 0, max: 500, noNaN: true }), (sha, shift, secs) => {
        const variant = base
          .replace(/abcdef0123456789abcdef0123456789abcdef01/g, sha)
          .replace(/^2025-05-05T05:(\d\d)/gm, (_m, mm: string) => `2026-01-0${(shift % 9) + 1}T1${shift % 10}:${mm}`)
          .replace(/finished in [\d.]+s/, `finished in ${secs.toFixed(2)}s`);
        return failureSignature(variant).signature === expected;
      }),
      { numRuns: 50 },
    );
  });

  it("runs in linear time on a large log", () => {
    const chunk = read("pytest-assertion-a.log");
    const big = chunk.repeat(Math.ceil(8_000_000 / chunk.length));
    const started = performance.now();
    failureSignature(big);
    expect(performance.now() - started).toBeLessThan(8_000);
  });

  it("survives pathological lines", () => {
    const nasty = ["a-".repeat(200_000), "0".repeat(500_000), "eyJ.".repeat(100_000), `${"x".repeat(300_000)}:1:1: error: y`].join("\n");
    const started = performance.now();
    failureSignature(nasty);
    expect(performance.now() - started).toBeLessThan(3_000);
  });
});

describe("normaliseForSignature", () => {
  it.each([
    ["at 2025-03-04T09:12:03.4471234Z done", "at <ts> done"],
    ["started 09:12:03,123 ok", "started <time> ok"],
    ["commit 3f9a1c2b7d4e5f60718293a4b5c6d7e8f9012345 failed", "commit <hex> failed"],
    ["short sha 3f9a1c2 failed", "short sha <hex> failed"],
    ["sha256:6e80b7dffed3e1b0d4aa3d8f2b9fa2a1c0d9e8f7a6b5c4d3e2f1a0b9c8d7e6f5", "sha256:<hex>"],
    ["deadbeef words stay words", "deadbeef words stay words"],
    ["request 4f1c2a9e-8b3d-4e5f-9a7b-1c2d3e4f5a6b failed", "request <uuid> failed"],
    ["object at 0x7f3a2b1c4d50", "object at <addr>"],
    ["read /tmp/pytest-of-runner/pytest-3/test_x0/out.csv: no such file", "read <tmp>: no such file"],
    ["open /var/folders/xy/abc123/T/tmp.Ab12/file", "open <tmp>"],
    ["/home/runner/work/web/web/src/a.ts", "src/a.ts"],
    ["/__w/web/web/src/a.ts", "src/a.ts"],
    ["D:\\a\\web\\web\\src\\a.ts", "src\\a.ts"],
    ["dial tcp 127.0.0.1:41235: connection refused", "dial tcp <ip>: connection refused"],
    ["listening on localhost:54321", "listening on localhost:<port>"],
    ["bind to port 8080 failed", "bind to port <port> failed"],
    ["src/foo.ts:12:5 - error", "src/foo.ts:<line> - error"],
    ["src/foo.ts(12,5): error", "src/foo.ts:<line>: error"],
    ['File "x.py", line 42, in test', 'File "x.py", line <n>, in test'],
    ["--- FAIL: TestX (0.53s)", "--- FAIL: TestX (<dur>)"],
    ["Time: 6.512 s", "Time: <dur>"],
    ["took 1m 2s", "took <dur> <dur>"],
    ["pod api-7d9f8c6b5d-x2x9k crashed", "pod api-<pod> crashed"],
    ["run 940463255 failed", "run <n> failed"],
    ["expected 200 got 503", "expected 200 got 503"],
    ["  lots   of   space  ", "lots of space"],
  ])("%j -> %j", (input, expected) => {
    expect(normaliseForSignature(input)).toBe(expected);
  });

  it("drops a job's matrix suffix", () => {
    expect(normaliseJobName("test (ubuntu-latest, 20)")).toBe("test");
    expect(normaliseJobName("build")).toBe("build");
  });
});
