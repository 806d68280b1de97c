import { getBuiltInScenario } from "@/server/execution/agents/scenarios";
import { DEMO_FLAKY_BRANCH, DEMO_SCENARIO } from "@/server/forges/local/demo";
import { commitIds, type HistoryCommit, type HistoryRef, importHistory } from "@/server/forges/local/history";
import { calculatorSum } from "./cases/calculator";
import { consoleDocker, consoleE2e, consoleEslint } from "./cases/console";
import { paymentsRefund, paymentsTsc, reconcilerPytest, relayGoTest } from "./cases/payments";
import type { AgentCase } from "./cases/types";
import { applyEdits } from "./diff";

// Every seeded repository is a real repository on the local forge: a scripted history whose
// commits are the ones the seeded pull requests, pipelines, runs and approvals name (branch
// heads, fork heads under refs/pull/<n>/head, release tags). Files are what the seeded agent
// sessions read and patch, so an approved patch applies to its branch. Commit dates are fixed,
// so every commit id is computed here (`SHA`) without git and is the same on every machine;
// `seedForge` writes the histories and checks git agrees.

const t0 = Date.parse("2026-01-05T09:00:00Z");
const at = (hours: number) => new Date(t0 + hours * 3_600_000);

/** A case's files as its session found them (`before`) or after its fix. */
function caseFiles(c: AgentCase, state: "before" | "fixed"): Record<string, string> {
  const files: Record<string, string> = { [c.read.path]: `${c.read.text}\n` };
  for (const change of c.fix?.changes ?? []) files[change.path] = `${state === "fixed" ? applyEdits(change) : change.before}\n`;
  return files;
}

type RepoHistory = { fullName: string; defaultBranch: string; commits: HistoryCommit[]; refs: HistoryRef[] };

// ---------------------------------------------------------------- demo/calculator

const calculatorBase = {
  "README.md": "# calculator\n\nSmall arithmetic helpers for invoices. `npm test` runs the suite (vitest).\n",
  "package.json": `{\n  "name": "calculator",\n  "version": "1.0.0",\n  "private": true,\n  "type": "module",\n  "scripts": { "test": "vitest run" },\n  "devDependencies": { "vitest": "^4.1.0" }\n}\n`,
  "src/sum.ts": `/** Adds every number in \`values\`; the sum of an empty list is 0. */\nexport function sum(values: readonly number[]): number {\n  let total = 0;\n  for (const value of values) total += value;\n  return total;\n}\n`,
  "src/format.ts": `/** Formats minor units (cents) as a decimal amount with two places. */\nexport function formatMinor(minor: number): string {\n  const sign = minor < 0 ? "-" : "";\n  const abs = Math.abs(minor);\n  return \`\${sign}\${Math.floor(abs / 100)}.\${String(abs % 100).padStart(2, "0")}\`;\n}\n`,
  "test/sum.test.ts": `import { describe, expect, it } from "vitest";\nimport { sum } from "../src/sum";\n\ndescribe("sum", () => {\n  it("returns 0 for an empty list", () => {\n    expect(sum([])).toBe(0);\n  });\n\n  it("adds every number in the list", () => {\n    expect(sum([1, 2, 3])).toBe(6);\n  });\n\n  it("returns the only element of a one-element list", () => {\n    expect(sum([7])).toBe(7);\n  });\n});\n`,
  "test/format.test.ts": `import { describe, expect, it } from "vitest";\nimport { formatMinor } from "../src/format";\n\ndescribe("formatMinor", () => {\n  it("formats whole amounts", () => expect(formatMinor(1200)).toBe("12.00"));\n  it("pads cents", () => expect(formatMinor(1205)).toBe("12.05"));\n  it("formats zero", () => expect(formatMinor(0)).toBe("0.00"));\n  it("keeps the sign", () => expect(formatMinor(-350)).toBe("-3.50"));\n});\n`,
};

const CALC_FLAKY_TEST = "test/due-date.test.ts";
const calculatorFlakyTest = `import { describe, expect, it } from "vitest";\n\ndescribe("due date", () => {\n  // Passed where the runner set TZ; a runner without it fails.\n  it("is computed in the invoicing zone", () => {\n    expect(process.env.TZ).toBe("Europe/Berlin");\n  });\n});\n`;

function calculatorHistory(): RepoHistory {
  const red = { ...calculatorBase, ...caseFiles(calculatorSum, "before") };
  const fixed = { ...calculatorBase, ...caseFiles(calculatorSum, "fixed") };
  // The live demo's starting point: the files the scripted scenario was recorded against.
  const scenarioFiles = getBuiltInScenario(DEMO_SCENARIO)?.assumes?.files;
  if (!scenarioFiles) throw new Error(`seed: scenario ${DEMO_SCENARIO} has no repository files`);
  const commits: HistoryCommit[] = [
    { name: "calcBase", files: calculatorBase, message: "Add sum() and formatMinor() with tests\n", date: at(0) },
    { name: "calcRed", parent: "calcBase", files: red, message: "sum(): index loop, tolerate holes in sparse arrays\n", date: at(2) },
    { name: "calcFixed", parent: "calcRed", files: fixed, message: `${calculatorSum.fix!.commitMessage}\n`, date: at(3) },
    { name: "calcInvoice", parent: "calcFixed", files: { ...fixed, ...scenarioFiles }, message: "Add invoice totals\n", date: at(5) },
    // The flaky-test scene (server/forges/local/demo.ts): a test that passed on the old runners,
    // which set TZ, and fails in the sandbox, which does not. The seed records the pass.
    { name: "calcFlaky", parent: "calcInvoice", files: { ...fixed, ...scenarioFiles, [CALC_FLAKY_TEST]: calculatorFlakyTest }, message: "Test the due-date zone\n", date: at(6) },
  ];
  return {
    fullName: "demo/calculator",
    defaultBranch: "main",
    commits,
    refs: [
      { ref: "refs/heads/main", commit: "calcInvoice" },
      { ref: "refs/heads/invoice-totals", commit: "calcInvoice" },
      { ref: `refs/heads/${DEMO_FLAKY_BRANCH}`, commit: "calcFlaky" },
    ],
  };
}

// ---------------------------------------------------------------- acme/payments-api

const paymentsBase = {
  "README.md": "# payments-api\n\nRefunds, money rounding, the settlement reconciler and the webhook relay.\n\n- `services/api`: TypeScript (vitest)\n- `services/reconciler`: Python (pytest)\n- `services/webhook-relay`: Go\n",
  "CHANGELOG.md": "# Changelog\n\n## v3.8.0\n\n- Ledger export (#401)\n- Stripe API version 2024-11 (#404)\n",
  "services/api/package.json": `{\n  "name": "@acme/payments-api",\n  "version": "3.8.0",\n  "private": true,\n  "scripts": { "test": "vitest run", "typecheck": "tsc --noEmit" }\n}\n`,
  "services/reconciler/pyproject.toml": '[project]\nname = "reconciler"\nversion = "3.8.0"\n',
  "services/webhook-relay/go.mod": "module github.com/acme/payments-api/services/webhook-relay\n\ngo 1.22\n",
};

function paymentsHistory(): RepoHistory {
  const main = { ...paymentsBase, "services/api/src/money/round.ts": `${paymentsTsc.read.text}\n` };
  const refund = caseFiles(paymentsRefund, "before");
  const commits: HistoryCommit[] = [
    { name: "payRelease", files: paymentsBase, message: "Release v3.8.0\n", date: at(-200) },
    { name: "payMain", parent: "payRelease", files: main, message: "money: roundMinor() over a currency table\n", date: at(-150) },
    { name: "pay412a", parent: "payMain", files: { ...main, ...refund, "services/api/src/refunds/idempotency-store.ts": "export interface IdempotencyStore {\n  get(key: string): Promise<unknown>;\n  put(key: string, value: unknown): Promise<void>;\n}\n" }, message: "refunds: store the first response under the idempotency key\n", date: at(-140) },
    { name: "pay412b", parent: "pay412a", files: { ...main, ...refund, "services/api/src/refunds/idempotency-store.ts": "export interface IdempotencyStore {\n  get(key: string): Promise<unknown>;\n  put(key: string, value: unknown, ttlSeconds?: number): Promise<void>;\n}\n" }, message: "refunds: expire idempotency keys after 24 h\n", date: at(-120) },
    { name: "pay415", parent: "payMain", files: { ...main, ...caseFiles(paymentsTsc, "before"), "services/api/src/money/currencies.ts": 'export type CurrencyCode = "EUR" | "USD" | "GBP" | "JPY" | "KRW";\n' }, message: "money: zero-decimal currencies in roundMinor()\n", date: at(-130) },
    { name: "pay409a", parent: "payMain", files: { ...main, ...caseFiles(reconcilerPytest, "before") }, message: "reconciler: track the remaining balance\n", date: at(-160) },
    { name: "pay409b", parent: "pay409a", files: { ...main, ...caseFiles(reconcilerPytest, "before"), "services/reconciler/tests/test_settlement.py": "from decimal import Decimal\n\n\ndef test_partial_settlement_keeps_remaining_balance(settle):\n    assert settle(Decimal('100.00'), [Decimal('62.50')]).remaining == Decimal('37.50')\n" }, message: "reconciler: test two-transfer settlements\n", date: at(-125) },
    { name: "pay418", parent: "payMain", files: { ...main, ...caseFiles(relayGoTest, "before") }, message: "webhook-relay: full jitter on retry backoff\n", date: at(-128) },
  ];
  return {
    fullName: "acme/payments-api",
    defaultBranch: "main",
    commits,
    refs: [
      { ref: "refs/heads/main", commit: "payMain" },
      { ref: "refs/tags/v3.8.0", commit: "payRelease" },
      { ref: "refs/heads/mchen/refund-idempotency", commit: "pay412b" },
      { ref: "refs/pull/412/head", commit: "pay412b" },
      // A fork's head lives in the base repository only under its pull request, as on GitHub.
      { ref: "refs/pull/415/head", commit: "pay415" },
      { ref: "refs/heads/priya/partial-settlement", commit: "pay409b" },
      { ref: "refs/pull/409/head", commit: "pay409b" },
      { ref: "refs/heads/tk/backoff-jitter", commit: "pay418" },
      { ref: "refs/pull/418/head", commit: "pay418" },
    ],
  };
}

// ---------------------------------------------------------------- acme/web-console

const consoleBase = {
  "README.md": "# web-console\n\nThe Acme customer console (Next.js). `npm run e2e` runs the Playwright suite.\n",
  "package.json": `{\n  "name": "@acme/web-console",\n  "version": "2.13.2",\n  "private": true\n}\n`,
  "charts/web-console/Chart.yaml": "apiVersion: v2\nname: web-console\nversion: 2.13.2\nappVersion: 2.13.2\n",
};

const withVersion = (files: Record<string, string>, v: string) => ({
  ...files,
  "package.json": files["package.json"]!.replace(/"version": "[^"]+"/, `"version": "${v}"`),
  "charts/web-console/Chart.yaml": `apiVersion: v2\nname: web-console\nversion: ${v}\nappVersion: ${v}\n`,
});

function consoleHistory(): RepoHistory {
  const e2e = caseFiles(consoleE2e, "before");
  const settings = caseFiles(consoleEslint, "before");
  const red = { ...consoleBase, ...e2e, "e2e/settings.spec.ts": "test(\"settings › saves notification preferences\", async ({ page }) => {\n  await page.goto(\"/settings/notifications\");\n});\n" };
  const nights = [3, 2, 1].map((n, i) => ({ name: `conNight${n}`, files: { ...red, "CHANGELOG.md": `# Changelog\n\n${"- maintenance\n".repeat(i + 1)}` } }));
  const main = { ...nights.at(-1)!.files, ...settings };
  const commits: HistoryCommit[] = [
    { name: "conRelease2132", files: consoleBase, message: "Release v2.13.2\n", date: at(-300) },
    { name: "conMainRed", parent: "conRelease2132", files: red, message: "settings: notification preferences form\n", date: at(-260) },
    ...nights.map((n, i): HistoryCommit => ({ name: n.name, parent: i === 0 ? "conMainRed" : nights[i - 1]!.name, files: n.files, message: `Nightly maintenance ${i + 1}\n`, date: at(-250 + i * 24) })),
    { name: "conMain", parent: "conNight1", files: main, message: "settings: notifications page prefetches on the server\n", date: at(-170) },
    { name: "conRelease2140", parent: "conMain", files: withVersion(main, "2.14.0"), message: "Release v2.14.0\n", date: at(-160) },
    { name: "con231a", parent: "conMain", files: { ...main, "src/app/settings/layout.tsx": "export default function SettingsLayout({ children }: { children: React.ReactNode }) {\n  return <section>{children}</section>;\n}\n" }, message: "settings: server components for the settings pages\n", date: at(-150) },
    // Force-pushed: a sibling of the first head, not its child.
    { name: "con231b", parent: "conMain", files: { ...main, "src/app/settings/layout.tsx": "export default function SettingsLayout({ children }: { children: React.ReactNode }) {\n  return <section className=\"settings\">{children}</section>;\n}\n" }, message: "settings: server components for the settings pages (rebased)\n", date: at(-140) },
    { name: "con236", parent: "conMain", files: { ...main, ...caseFiles(consoleDocker, "before"), ".nvmrc": "22\n" }, message: "chore(deps): update node docker tag to 22-alpine\n", date: at(-155) },
    { name: "con229", parent: "conMain", files: { ...main, "src/server/notifications/email.ts": "export async function emailOnApprovalRequest(to: string): Promise<void> {\n  void to;\n}\n" }, message: "notifications: email on approval requests\n", date: at(-152) },
  ];
  return {
    fullName: "acme/web-console",
    defaultBranch: "main",
    commits,
    refs: [
      { ref: "refs/heads/main", commit: "conRelease2140" },
      { ref: "refs/tags/v2.13.2", commit: "conRelease2132" },
      { ref: "refs/tags/v2.14.0", commit: "conRelease2140" },
      { ref: "refs/heads/settings-rsc", commit: "con231b" },
      { ref: "refs/pull/231/head", commit: "con231b" },
      { ref: "refs/heads/renovate/node-22.x", commit: "con236" },
      { ref: "refs/pull/236/head", commit: "con236" },
      { ref: "refs/heads/notify-approvals", commit: "con229" },
      { ref: "refs/pull/229/head", commit: "con229" },
    ],
  };
}

export const histories: RepoHistory[] = [calculatorHistory(), paymentsHistory(), consoleHistory()];

type ShaName =
  | "calcBase" | "calcRed" | "calcFixed" | "calcInvoice" | "calcFlaky"
  | "payRelease" | "payMain" | "pay412a" | "pay412b" | "pay415" | "pay409a" | "pay409b" | "pay418"
  | "conRelease2132" | "conMainRed" | "conNight3" | "conNight2" | "conNight1" | "conMain" | "conRelease2140" | "con231a" | "con231b" | "con236" | "con229";

/** Every commit the seed talks about, by a readable name: ids of real commits in the local forge. */
export const SHA = Object.assign({}, ...histories.map((h) => commitIds(h.commits))) as Record<ShaName, string>;

/** Writes the seeded repositories' histories into the local forge (idempotent). */
export async function seedForge(dataDir: string): Promise<void> {
  for (const h of histories) {
    const { ids } = await importHistory({ dataDir, ...h });
    for (const [name, id] of Object.entries(ids)) {
      if (SHA[name as ShaName] !== id) throw new Error(`seed: ${h.fullName} commit ${name} is ${id}, expected ${SHA[name as ShaName]}`);
    }
  }
}
