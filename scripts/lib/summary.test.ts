import { describe, expect, it } from "vitest";
import { summarise } from "./summary.mjs";

const vitest = (passed: number, failed = 0, pending = 0) => ({ numPassedTests: passed, numFailedTests: failed, numPendingTests: pending, numTodoTests: 0 });
const playwright = (expected: number, unexpected = 0, skipped = 0) => ({ stats: { expected, unexpected, skipped, flaky: 0 } });
const ok = (name: string) => ({ name, ok: true, seconds: 1 });
const V20 = "unit + integration (vitest, node 20.20.2)";
const V22 = "unit + integration (vitest, node 22.23.5)";

describe("summarise", () => {
  it("sums both Nodes' tests into the last line, with a line per Node", () => {
    const s = summarise(
      [ok("typecheck"), ok(V20), ok("e2e (playwright)"), ok(V22)],
      [
        { node: "20.20.2", vitestStep: V20, vitest: vitest(1300, 0, 2), playwright: playwright(60, 0, 1) },
        { node: "22.23.5", vitestStep: V22, vitest: vitest(1300, 0, 2) },
      ],
    );
    expect(s.lines.at(-1)).toBe("2660 passed, 0 failed, 5 skipped");
    expect(s.lines).toContain("  node 20.20.2 (vitest + playwright): 1360 passed, 0 failed, 3 skipped");
    expect(s.lines).toContain("  node 22.23.5 (vitest): 1300 passed, 0 failed, 2 skipped");
  });

  it("a test failing on Node 22 only fails the run", () => {
    const s = summarise(
      [ok(V20), ok("e2e (playwright)"), { name: V22, ok: false, seconds: 1 }],
      [
        { node: "20.20.2", vitestStep: V20, vitest: vitest(10), playwright: playwright(5) },
        { node: "22.23.5", vitestStep: V22, vitest: vitest(9, 1) },
      ],
    );
    expect(s.failed).toBe(1);
  });

  it("a second Node that left no report is a failure, named", () => {
    const s = summarise(
      [ok(V20), ok("e2e (playwright)"), { name: "unit + integration (vitest, node at /missing/node)", ok: false, seconds: 0 }],
      [
        { node: "20.20.2", vitestStep: V20, vitest: vitest(10), playwright: playwright(5) },
        { node: "at /missing/node", vitestStep: "unit + integration (vitest, node at /missing/node)", vitest: null },
      ],
    );
    expect(s.failed).toBe(1);
    expect(s.lines).toContain("  missing report: vitest (node at /missing/node)");
  });

  it("a vitest run that exits non-zero with no failed test is a failure (a crashed worker)", () => {
    const s = summarise([{ name: V20, ok: false, seconds: 1 }], [{ node: "20.20.2", vitestStep: V20, vitest: vitest(10) }]);
    expect(s.failed).toBe(1);
  });

  it("a failed audit is a failure; an audit that could not ask is a skip that says why", () => {
    const failedAudit = summarise([{ name: "audit", ok: false, seconds: 1, note: "production dependencies: 0 critical, 1 high, 0 moderate, 0 low" }], []);
    expect(failedAudit.lines.at(-1)).toBe("0 passed, 1 failed, 0 skipped");
    const unavailable = summarise([{ name: "audit", ok: true, skipped: true, seconds: 1, note: "the registry's advisory endpoint could not be asked: 405" }], []);
    expect(unavailable.lines).toContain("  SKIP audit (1.0 s): the registry's advisory endpoint could not be asked: 405");
    expect(unavailable.lines.at(-1)).toBe("0 passed, 0 failed, 1 skipped");
  });

  it("a missing e2e report is a failure", () => {
    const s = summarise([ok(V20)], [{ node: "20.20.2", vitestStep: V20, vitest: vitest(10), playwright: null }]);
    expect(s.lines).toContain("  missing report: playwright");
    expect(s.failed).toBe(1);
  });
});
