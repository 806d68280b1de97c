// Bounded, already-redacted log excerpts of the seeded failing jobs, as CI
// printed them. `startLine` is the line number of the first excerpt line in the
// full job log.

export type LogExcerpt = { text: string; startLine: number; redactions: { rule: string; count: number }[] };

const log = (startLine: number, text: string, redactions: LogExcerpt["redactions"] = []): LogExcerpt => ({
  text: text.replace(/^\n/, "").replace(/\n$/, ""),
  startLine,
  redactions,
});

export const LOGS = {
  calculatorSum: log(
    4,
    `
> calculator@1.0.0 test
> vitest run

 RUN  v3.2.4 /workspace/demo/calculator

 ✓ test/format.test.ts (4 tests) 3ms
 ❯ test/sum.test.ts (3 tests | 2 failed) 7ms
   ✓ sum > returns 0 for an empty list 1ms
   × sum > adds every number in the list 4ms
     → expected 5 to be 6 // Object.is equality
   × sum > returns the only element of a one-element list 1ms
     → expected 0 to be 7 // Object.is equality

⎯⎯⎯⎯⎯⎯⎯ Failed Tests 2 ⎯⎯⎯⎯⎯⎯⎯

 FAIL  test/sum.test.ts > sum > adds every number in the list
AssertionError: expected 5 to be 6 // Object.is equality

- Expected
+ Received

- 6
+ 5

 ❯ test/sum.test.ts:9:28
      7|
      8|   it("adds every number in the list", () => {
      9|     expect(sum([1, 2, 3])).toBe(6);
       |                            ^
     10|   });
     11|

⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯[1/2]⎯

 FAIL  test/sum.test.ts > sum > returns the only element of a one-element list
AssertionError: expected 0 to be 7 // Object.is equality

- Expected
+ Received

- 7
+ 0

 ❯ test/sum.test.ts:13:24
     12|   it("returns the only element of a one-element list", () => {
     13|     expect(sum([7])).toBe(7);
       |                      ^
     14|   });

 Test Files  1 failed | 1 passed (2)
      Tests  2 failed | 5 passed (7)
   Start at  14:02:11
   Duration  412ms (transform 61ms, setup 0ms, collect 48ms, tests 10ms, environment 0ms, prepare 102ms)

npm error Lifecycle script \`test\` failed with error:
npm error code 1
npm error path /workspace/demo/calculator
npm error command failed
npm error command sh -c vitest run`,
  ),

  paymentsRefund: log(
    212,
    `
> @acme/payments-api@3.8.0 test
> vitest run --project api

 RUN  v3.2.4 /home/runner/work/payments-api/payments-api/services/api

 ✓ src/money/round.test.ts (14 tests) 9ms
 ✓ src/charges/charge-service.test.ts (22 tests) 41ms
 ✓ src/webhooks/stripe-signature.test.ts (6 tests) 12ms
 ❯ src/refunds/refund-service.test.ts (9 tests | 1 failed) 38ms
   ✓ RefundService > refunds a captured charge 6ms
   ✓ RefundService > refuses to refund more than the captured amount 2ms
   × RefundService > returns the original refund when an idempotency key is replayed 12ms
     → expected { id: 're_3PqL8n2eZvKYlo2C1x0', …(4) } to deeply equal { id: 're_3PqL8m9aXvKYlo2C0hT', …(4) }

⎯⎯⎯⎯⎯⎯⎯ Failed Tests 1 ⎯⎯⎯⎯⎯⎯⎯

 FAIL  src/refunds/refund-service.test.ts > RefundService > returns the original refund when an idempotency key is replayed
AssertionError: expected { id: 're_3PqL8n2eZvKYlo2C1x0', …(4) } to deeply equal { id: 're_3PqL8m9aXvKYlo2C0hT', …(4) }

- Expected
+ Received

  {
    "amount": 4200,
    "chargeId": "ch_3PqL7z2eZvKYlo2C0Qm",
    "currency": "eur",
-   "id": "re_3PqL8m9aXvKYlo2C0hT",
+   "id": "re_3PqL8n2eZvKYlo2C1x0",
    "status": "pending",
  }

 ❯ src/refunds/refund-service.test.ts:88:20
     86|     const first = await service.refund({ chargeId, amount: 4200, idempotencyKey: "key-1" });
     87|     const replay = await service.refund({ chargeId, amount: 4200, idempotencyKey: "key-1" });
     88|     expect(replay).toEqual(first);
       |                    ^
     89|     expect(gateway.createRefund).toHaveBeenCalledTimes(1);
     90|   });

⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯[1/1]⎯

 Test Files  1 failed | 11 passed (12)
      Tests  1 failed | 186 passed (187)
   Start at  09:41:27
   Duration  3.92s (transform 1.21s, setup 0ms, collect 6.80s, tests 412ms, environment 2ms, prepare 1.77s)

Error: Process completed with exit code 1.`,
  ),

  paymentsTsc: log(
    58,
    `
> @acme/payments-api@3.8.0 typecheck
> tsc -p services/api --noEmit

services/api/src/money/round.ts(27,9): error TS2322: Type 'number | undefined' is not assignable to type 'number'.
  Type 'undefined' is not assignable to type 'number'.
services/api/src/money/round.ts(31,37): error TS2538: Type 'undefined' cannot be used as an index type.
services/api/src/money/round.test.ts(12,34): error TS2345: Argument of type '"JPY"' is not assignable to parameter of type 'CurrencyCode'.

Found 3 errors in 2 files.

Errors  Files
     2  services/api/src/money/round.ts:27
     1  services/api/src/money/round.test.ts:12
Error: Process completed with exit code 2.`,
  ),

  reconcilerPytest: log(
    131,
    `
============================= test session starts ==============================
platform linux -- Python 3.12.4, pytest-8.3.2, pluggy-1.5.0
rootdir: /home/runner/work/payments-api/payments-api/services/reconciler
configfile: pyproject.toml
plugins: cov-5.0.0, asyncio-0.23.8
collected 64 items

tests/test_ledger.py ........................                            [ 37%]
tests/test_settlement.py .......F.....                                   [ 57%]
tests/test_statements.py ...........................                     [100%]

=================================== FAILURES ===================================
_______________ test_partial_settlement_keeps_remaining_balance ________________

    def test_partial_settlement_keeps_remaining_balance():
        payout = Payout(id="po_1Q2", amount=Decimal("120.00"), currency="EUR")
        ledger = Ledger.with_open_payout(payout)

        result = settle(ledger, payout.id, received=Decimal("82.50"))

>       assert result.remaining == Decimal("37.50")
E       AssertionError: assert Decimal('0.00') == Decimal('37.50')
E        +  where Decimal('0.00') = SettlementResult(payout_id='po_1Q2', status=<SettlementStatus.SETTLED: 'settled'>, remaining=Decimal('0.00')).remaining

tests/test_settlement.py:58: AssertionError
=========================== short test summary info ============================
FAILED tests/test_settlement.py::test_partial_settlement_keeps_remaining_balance - AssertionError: assert Decimal('0.00') == Decimal('37.50')
========================= 1 failed, 63 passed in 1.84s =========================
Error: Process completed with exit code 1.`,
  ),

  relayGoTest: log(
    77,
    `
go test ./... -race -count=1
=== RUN   TestBackoffWithJitter
=== RUN   TestBackoffWithJitter/first_retry_is_within_base
=== RUN   TestBackoffWithJitter/grows_exponentially
=== RUN   TestBackoffWithJitter/caps_at_max_delay
    backoff_test.go:42: attempt 9: delay 41.237s exceeds MaxDelay 30s
--- FAIL: TestBackoffWithJitter (0.00s)
    --- PASS: TestBackoffWithJitter/first_retry_is_within_base (0.00s)
    --- PASS: TestBackoffWithJitter/grows_exponentially (0.00s)
    --- FAIL: TestBackoffWithJitter/caps_at_max_delay (0.00s)
=== RUN   TestRetryBudget
--- PASS: TestRetryBudget (0.00s)
FAIL
FAIL	github.com/acme/payments-api/services/webhook-relay/internal/retry	0.014s
ok  	github.com/acme/payments-api/services/webhook-relay/internal/relay	0.087s
ok  	github.com/acme/payments-api/services/webhook-relay/internal/signing	0.021s
FAIL
Error: Process completed with exit code 1.`,
  ),

  consoleEslint: log(
    96,
    `
> web-console@2.14.0 lint
> eslint . --max-warnings 0

/home/runner/work/web-console/web-console/src/app/settings/notifications/page.tsx
  14:3  error    Promises must be awaited, end with a call to .catch, end with a call to .then with a rejection handler or be explicitly marked as ignored with the \`void\` operator  @typescript-eslint/no-floating-promises
  31:6  warning  React Hook useEffect has a missing dependency: 'form'. Either include it or remove the dependency array                                                                          react-hooks/exhaustive-deps

/home/runner/work/web-console/web-console/src/app/settings/profile/actions.ts
  22:9  error  'session' is assigned a value but never used  @typescript-eslint/no-unused-vars

✖ 3 problems (2 errors, 1 warning)

ESLint found too many warnings (maximum: 0).
Error: Process completed with exit code 1.`,
  ),

  consoleDocker: log(
    143,
    `
#8 [deps 2/4] RUN echo "//npm.pkg.github.com/:_authToken=\${NPM_TOKEN}" > .npmrc
#8 0.183 + echo //npm.pkg.github.com/:_authToken=[REDACTED:npm-token]
#8 DONE 0.2s

#9 [deps 3/4] COPY package.json package-lock.json ./
#9 DONE 0.0s

#10 [deps 4/4] RUN npm ci --omit=dev
#10 9.310 npm error code 1
#10 9.311 npm error path /app/node_modules/bcrypt
#10 9.311 npm error command failed
#10 9.311 npm error command sh -c node-pre-gyp install --fallback-to-build
#10 9.312 npm error node-pre-gyp WARN Pre-built binaries not installable for bcrypt@5.1.1 and node@22.11.0 (node-v127 ABI, musl) (falling back to source compile with node-gyp)
#10 9.312 npm error gyp info it worked if it ends with ok
#10 9.312 npm error gyp ERR! find Python
#10 9.312 npm error gyp ERR! find Python Python is not set from command line or npm configuration
#10 9.313 npm error gyp ERR! find Python checking if "python3" can be used
#10 9.313 npm error gyp ERR! find Python - "python3" is not in PATH or produced an error
#10 9.314 npm error gyp ERR! configure error
#10 9.314 npm error gyp ERR! stack Error: Could not find any Python installation to use
#10 9.315 npm error gyp ERR! node -v v22.11.0
#10 9.402 npm error A complete log of this run can be found in: /root/.npm/_logs/2026-11-27T10_14_02_118Z-debug-0.log
#10 ERROR: process "/bin/sh -c npm ci --omit=dev" did not complete successfully: exit code: 1
------
 > [deps 4/4] RUN npm ci --omit=dev:
9.314 npm error gyp ERR! configure error
9.314 npm error gyp ERR! stack Error: Could not find any Python installation to use
------
Dockerfile:9
--------------------
   7 |     RUN echo "//npm.pkg.github.com/:_authToken=\${NPM_TOKEN}" > .npmrc
   8 |     COPY package.json package-lock.json ./
   9 | >>> RUN npm ci --omit=dev
  10 |
  11 |     FROM node:22-alpine AS build
--------------------
ERROR: failed to solve: process "/bin/sh -c npm ci --omit=dev" did not complete successfully: exit code: 1
Error: buildx failed with: ERROR: failed to solve: process "/bin/sh -c npm ci --omit=dev" did not complete successfully: exit code: 1`,
    [{ rule: "npm-token", count: 1 }],
  ),

  consoleE2eTimeout: log(
    318,
    `
Running 48 tests using 4 workers

  ✓  12 [chromium] › e2e/settings.spec.ts:18:5 › settings › updates the display name (2.1s)
  ✘  13 [chromium] › e2e/settings.spec.ts:41:5 › settings › saves notification preferences (30.0s)
  ✘  14 [chromium] › e2e/settings.spec.ts:41:5 › settings › saves notification preferences (retry #1) (30.0s)
  ✓  15 [chromium] › e2e/settings.spec.ts:63:5 › settings › revokes an API token (1.8s)

  1) [chromium] › e2e/settings.spec.ts:41:5 › settings › saves notification preferences ────────────

    Test timeout of 30000ms exceeded.

    Error: locator.click: Test timeout of 30000ms exceeded.
    Call log:
      - waiting for getByRole('button', { name: 'Save preferences' })
      -   locator resolved to <button disabled type="submit" class="btn btn-primary">Save preferences</button>
      - attempting click action
      -   waiting for element to be visible, enabled and stable
      -   element is not enabled
      - retrying click action, attempt #1
      -   waiting for element to be visible, enabled and stable
      -   element is not enabled

      47 |     await page.getByLabel('Email me when a run needs approval').check();
      48 |     await expect(page.getByText('Unsaved changes')).toBeVisible();
    > 49 |     await page.getByRole('button', { name: 'Save preferences' }).click();
         |                                                                  ^
      50 |     await expect(page.getByRole('status')).toHaveText('Preferences saved');
      51 |   });

        at /home/runner/work/web-console/web-console/e2e/settings.spec.ts:49:66

    Retry #1 ───────────────────────────────────────────────────────────────────────

    Test timeout of 30000ms exceeded.

  1 failed
    [chromium] › e2e/settings.spec.ts:41:5 › settings › saves notification preferences
  47 passed (1.9m)
Error: Process completed with exit code 1.`,
  ),
} as const satisfies Record<string, LogExcerpt>;

export type LogName = keyof typeof LOGS;
