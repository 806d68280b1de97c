import { LOGS } from "../logs";
import type { AgentCase } from "./types";

// demo/calculator: `sum()` starts its loop at index 1, so it drops the first
// element. The scripted-demo-fixer stack replays exactly this session.

const sumBefore = `/** Adds every number in \`values\`; the sum of an empty list is 0. */
export function sum(values: readonly number[]): number {
  let total = 0;
  for (let i = 1; i < values.length; i++) {
    total += values[i] ?? 0;
  }
  return total;
}`;

export const calculatorSum: AgentCase = {
  opening:
    "Two assertions in `test/sum.test.ts` fail: `sum([1, 2, 3])` returns **5** and `sum([7])` returns **0**. Both results are missing exactly the first element, which points at the loop bounds. Reproducing first.",
  reproduce: {
    command: "npm test -- test/sum.test.ts",
    description: "Run the failing test file",
    output: LOGS.calculatorSum.text.split("\n").slice(4, 13).join("\n") + "\n\n Test Files  1 failed (1)\n      Tests  2 failed | 1 passed (3)",
    ms: 1_930,
    isError: true,
  },
  read: { path: "src/sum.ts", firstLine: 1, text: sumBefore },
  rootCause: "`sum()` starts its loop at `i = 1` (src/sum.ts:4), so the first element is never added: off by one.",
  diagnosis: `# Diagnosis: \`sum()\` skips the first element

**Check:** \`npm test\` on \`main\` · **Failing tests:** \`sum > adds every number in the list\`, \`sum > returns the only element of a one-element list\`

## Root cause

\`src/sum.ts:4\` starts the loop at \`i = 1\`:

\`\`\`ts
for (let i = 1; i < values.length; i++) {
\`\`\`

Index 0 is never added, so every result is short by the first element: \`sum([1, 2, 3])\` is 5 and \`sum([7])\` is 0. The empty-list test passes only because there is nothing to skip.

## Fix

Start the loop at 0. No other code depends on the current behaviour (\`mean()\` is not implemented yet on \`main\`).

## Confidence

High: both failures are explained exactly by the missing first element.
`,
  closingDiagnose:
    "**Root cause:** off-by-one in `src/sum.ts:4`: the loop starts at `i = 1` and never adds `values[0]`.\n\nThe diagnosis is in `diagnosis.md`. A repair run can apply the one-line fix.",
  fix: {
    changes: [{ path: "src/sum.ts", firstLine: 1, before: sumBefore, edits: [{ old: "for (let i = 1;", new: "for (let i = 0;" }] }],
    verify: {
      command: "npm test",
      description: "Run the whole suite",
      output: `> calculator@1.0.0 test
> vitest run

 RUN  v3.2.4 /workspace/demo/calculator

 ✓ test/format.test.ts (4 tests) 3ms
 ✓ test/sum.test.ts (3 tests) 2ms

 Test Files  2 passed (2)
      Tests  7 passed (7)
   Start at  14:06:52
   Duration  388ms (transform 58ms, setup 0ms, collect 44ms, tests 5ms, environment 0ms, prepare 97ms)`,
      ms: 2_210,
    },
    review: "One-line change to the loop start; no test was modified. Approve.",
    commitMessage: "Fix off-by-one in sum(): start the loop at index 0",
    closingRepair:
      "Fixed: the loop in `src/sum.ts` now starts at index 0.\n\n- `npm test`: **7 passed** (was 2 failed)\n- Patch: `fix.patch` (1 file, +1 −1)\n\nWaiting for approval to push the commit to `main`; the local CI reruns `npm test` after the push.",
  },
};

/** The verification after the approved fix was pushed and the check reran. */
export const calculatorRerunGreen: AgentCase = {
  opening: "The check `npm test` reran after the approved push. Confirming it is green on the new head before closing the loop.",
  reproduce: {
    command: "npm test",
    description: "Run the suite on the pushed commit",
    output: calculatorSum.fix!.verify.output,
    ms: 2_050,
  },
  read: { path: "src/sum.ts", firstLine: 4, text: "  for (let i = 0; i < values.length; i++) {" },
  rootCause: "The pushed commit contains the approved patch; all 7 tests pass.",
  diagnosis: `# Verification: \`npm test\` is green

The rerun of \`npm test\` after the approved push passed: **7 tests, 0 failures**. The commit contains exactly the approved patch (digest unchanged). Nothing left to do.
`,
  closingDiagnose: "`npm test` passes on the pushed commit (7/7). The failure signature no longer reproduces.",
};
