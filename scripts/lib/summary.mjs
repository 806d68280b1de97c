// `npm test`'s closing lines, from its steps and the runners' JSON reports: a line per step, a
// line per Node the tests ran on, then `N passed, N failed, N skipped`, summed over both.

/**
 * @param {{ name: string, ok: boolean, skipped?: boolean, note?: string, seconds: number }[]} steps
 *   a step whose `ok` is false is one failure (typecheck, lint, audit, build, a runner that crashed
 *   without failing a test); `skipped` is one skip (it could not run, and says why in `note`).
 * @param {{ node: string, vitestStep: string, vitest: object | null, playwright?: object | null }[]} runtimes
 *   the reports each Node produced (null: missing, a failure); `playwright` only where e2e ran.
 */
export function summarise(steps, runtimes) {
  const lines = [];
  let passed = 0;
  let failed = 0;
  let skipped = 0;
  const missing = [];
  const perRuntime = [];
  for (const rt of runtimes) {
    const c = { passed: 0, failed: 0, skipped: 0 };
    if (rt.vitest) {
      c.passed += rt.vitest.numPassedTests;
      c.failed += rt.vitest.numFailedTests;
      c.skipped += rt.vitest.numPendingTests + (rt.vitest.numTodoTests ?? 0);
      // Exited non-zero with no failed test: a crashed worker, an unhandled error.
      if (rt.vitest.numFailedTests === 0 && steps.find((s) => s.name === rt.vitestStep)?.ok === false) c.failed += 1;
    } else {
      missing.push(`vitest (node ${rt.node})`);
    }
    if (rt.playwright) {
      c.passed += rt.playwright.stats.expected + rt.playwright.stats.flaky;
      c.failed += rt.playwright.stats.unexpected;
      c.skipped += rt.playwright.stats.skipped;
    } else if (rt.playwright === null) {
      missing.push("playwright");
    }
    perRuntime.push(`  node ${rt.node} (${rt.playwright === undefined ? "vitest" : "vitest + playwright"}): ${c.passed} passed, ${c.failed} failed, ${c.skipped} skipped`);
    passed += c.passed;
    failed += c.failed;
    skipped += c.skipped;
  }
  const runnerStep = (s) => runtimes.some((rt) => rt.vitestStep === s.name) || s.name.startsWith("e2e");
  failed += steps.filter((s) => !s.ok && !runnerStep(s)).length + missing.length;
  skipped += steps.filter((s) => s.skipped).length;

  for (const s of steps) {
    const mark = s.skipped ? "SKIP" : s.ok ? "ok  " : "FAIL";
    lines.push(`  ${mark} ${s.name}${s.seconds ? ` (${s.seconds.toFixed(1)} s)` : ""}${s.note ? `: ${s.note}` : ""}`);
  }
  if (missing.length) lines.push(`  missing report: ${missing.join(", ")}`);
  lines.push(...perRuntime);
  if (runtimes.length > 1) lines.push("  (the last line sums the tests of every Node, and every step)");
  lines.push(`${passed} passed, ${failed} failed, ${skipped} skipped`);
  return { passed, failed, skipped, lines };
}
