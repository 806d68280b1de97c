import { describe, expect, it } from "vitest";
import { isAppError } from "@/server/errors";
import { buildContextBundle, deriveStackTrace, extractFilePaths } from "./build-context-bundle";
import { canonicalJson } from "@/server/lib/canonical-json";
import { contentDigest } from "@/server/lib/digest";
import { zContextBundle } from "./context-bundle";
import { SAMPLE_LOG, sampleInput } from "./fixtures/sample-input";

const NPM_TOKEN = "npm_Zq8Lr2Vx9Tk4Wm7Pn3Hs6Jd1Fb5Gc0Ya2Eu";
const GH_PAT = ["ghp", "_", "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"].join("");

describe("buildContextBundle", () => {
  it("fills every field the spec lists", () => {
    const { bundle } = buildContextBundle(sampleInput());
    expect(Object.keys(bundle).sort()).toEqual(
      [
        "actor",
        "artifacts",
        "contextLabels",
        "failure",
        "identity",
        "job",
        "logs",
        "pipeline",
        "policy",
        "pullRequest",
        "redaction",
        "ref",
        "repository",
        "source",
        "stack",
        "task",
        "version",
      ].sort(),
    );
    expect(zContextBundle.parse(bundle)).toEqual(bundle);
    expect(bundle.task.outputFormat).toMatch(/^A Markdown diagnosis/);
  });

  it("reads the failure from the failed job's log", () => {
    const { bundle } = buildContextBundle(sampleInput());
    expect(bundle.failure).toMatchObject({
      signature: expect.stringMatching(/^[0-9a-f]{16}$/),
      testNames: ["src/lib/date.test.ts > formatRelative > formats yesterday"],
      errorLines: ["AssertionError: expected 'in 1 day' to be 'yesterday' // Object.is equality"],
      filePaths: ["src/lib/date.test.ts"],
      similarRuns: [],
    });
  });

  it("keeps known failure facts over derived ones", () => {
    const similar = { runId: "run_9", headSha: "b".repeat(40), signature: "abc", url: null, at: null, outcome: "fixed by #13" };
    const { bundle } = buildContextBundle(
      sampleInput({ failure: { signature: "feedfacefeedface", similarRuns: [similar], stackTrace: null } }),
    );
    expect(bundle.failure).toMatchObject({ signature: "feedfacefeedface", similarRuns: [similar], stackTrace: null });
    expect(bundle.failure?.testNames).toHaveLength(1);
  });

  it("has no failure without a log or known facts", () => {
    expect(buildContextBundle(sampleInput({ logs: [], failure: undefined })).bundle.failure).toBeNull();
  });

  it("bounds the log excerpt around the first error and keeps its line numbers", () => {
    const { bundle } = buildContextBundle(sampleInput(), { excerpt: { maxLines: 7 } });
    const log = bundle.logs[0];
    expect(log).toMatchObject({ totalLines: SAMPLE_LOG.trimEnd().split("\n").length, truncated: true });
    expect(log?.endLine).toBe((log?.startLine ?? 0) + 6);
    expect(log?.excerpt).toContain("FAIL");
    expect(log?.focusLine).toBeGreaterThanOrEqual(log?.startLine ?? 0);
    const fromLog = SAMPLE_LOG.split("\n")[(log?.focusLine ?? 1) - 1] ?? "";
    expect(fromLog).toContain("FAIL");
  });

  it("redacts every string before digesting and reports what it removed", () => {
    const leaky = sampleInput({
      logs: [{ name: "job", text: `${SAMPLE_LOG}\necho ${NPM_TOKEN}\nGH_TOKEN=${GH_PAT}\n` }],
      pullRequest: {
        number: 12,
        title: "Relative dates",
        body: `Try it with ${GH_PAT}`,
        author: "octocat",
        labels: [],
        changedFiles: [],
        discussion: [{ kind: "comment", author: "x", body: `token: ${NPM_TOKEN}`, url: null, at: null }],
      },
    });
    const { bundle, canonical } = buildContextBundle(leaky, { secrets: [{ name: "NPM_TOKEN", value: NPM_TOKEN }], excerpt: { maxLines: 1000 } });
    expect(canonical).not.toContain(NPM_TOKEN);
    expect(canonical).not.toContain(GH_PAT);
    expect(bundle.pullRequest?.body).toBe("Try it with [REDACTED:github_token]");
    expect(bundle.pullRequest?.discussion[0]?.body).toBe("token: [REDACTED:known_secret:NPM_TOKEN]");
    expect(bundle.logs[0]?.redaction.status).toBe("redacted");
    expect(bundle.redaction).toMatchObject({
      status: "redacted",
      entries: [
        { kind: "github_token", count: 2, name: null },
        { kind: "known_secret", count: 2, name: "NPM_TOKEN" },
      ],
    });
  });

  it("reports a clean bundle as clean", () => {
    expect(buildContextBundle(sampleInput()).bundle.redaction).toEqual({ status: "clean", entries: [], warnings: [] });
  });

  it("computes the digest from the canonical JSON", () => {
    const built = buildContextBundle(sampleInput());
    expect(built.canonical).toBe(canonicalJson(built.bundle));
    expect(built.digest).toBe(contentDigest(built.canonical));
    expect(built.digest).toMatch(/^sha256:[0-9a-f]{64}$/);
  });

  it("gives the same digest whatever order sets arrive in", () => {
    const a = sampleInput();
    const b = sampleInput({
      pullRequest: { ...a.pullRequest!, labels: [...a.pullRequest!.labels].reverse(), changedFiles: [...a.pullRequest!.changedFiles].reverse() },
      artifacts: [...(a.artifacts ?? [])].reverse(),
      stack: { ...a.stack, subagents: [...a.stack.subagents].reverse(), tools: [...a.stack.tools].reverse() },
    });
    expect(buildContextBundle(b).digest).toBe(buildContextBundle(a).digest);
  });

  it("changes the digest when anything meaningful changes", () => {
    const base = buildContextBundle(sampleInput()).digest;
    expect(buildContextBundle(sampleInput({ ref: { ...sampleInput().ref, commitSha: "c".repeat(40) } })).digest).not.toBe(base);
    expect(buildContextBundle(sampleInput({ task: { kind: "repair" } })).digest).not.toBe(base);
    const reordered = sampleInput();
    reordered.contextLabels = [...(reordered.contextLabels ?? [])].reverse();
    expect(buildContextBundle(reordered).digest).not.toBe(base);
  });

  it("names the bad field when the input is invalid", () => {
    try {
      buildContextBundle(sampleInput({ repository: { ...sampleInput().repository, fullName: "" } }));
      expect.unreachable();
    } catch (err) {
      expect(isAppError(err) && err.code).toBe("UNPROCESSABLE");
      expect((err as Error).message).toBe("invalid context bundle: repository.fullName: Too small: expected string to have >=1 characters");
    }
  });
});

describe("deriveStackTrace", () => {
  it.each([
    [
      "javascript",
      "TypeError: x is undefined\n    at parse (src/a.ts:1:2)\n    at main (src/b.ts:3:4)\nnext",
      "    at parse (src/a.ts:1:2)\n    at main (src/b.ts:3:4)",
    ],
    [
      "python",
      'E bad\nTraceback (most recent call last):\n  File "a.py", line 1, in <module>\n    main()\nValueError: x',
      'Traceback (most recent call last):\n  File "a.py", line 1, in <module>\n    main()',
    ],
    [
      "go",
      "panic: boom\n\ngoroutine 23 [running]:\nmain.f(0x0)\n\t/src/main.go:5 +0x1a\nFAIL",
      "goroutine 23 [running]:\nmain.f(0x0)\n\t/src/main.go:5 +0x1a",
    ],
  ])("%s", (_lang, text, expected) => {
    expect(deriveStackTrace(text)).toBe(expected);
  });

  it("is null without a trace", () => {
    expect(deriveStackTrace("error: nope")).toBeNull();
  });
});

describe("extractFilePaths", () => {
  it("finds repository paths, not dependencies or absolute paths", () => {
    expect(
      extractFilePaths([
        "src/server/router.ts:<line>: TS2322: nope",
        "tests/test_export.py::test_csv_header",
        "node_modules/react/index.js broke",
        "/usr/lib/x.c: boom",
        "Cargo.toml is fine, src/lib.rs is not",
      ]),
    ).toEqual(["Cargo.toml", "src/lib.rs", "src/server/router.ts", "tests/test_export.py"]);
  });
});
