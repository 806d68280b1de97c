import type { AgentCase } from "./types";

// acme/payments-api: a vitest failure (refund idempotency), a tsc error on a
// fork PR, a pytest failure in the reconciler and a go test failure in the
// webhook relay.

const refundServiceBefore = `export class RefundService {
  constructor(private readonly gateway: PaymentGateway, private readonly store: IdempotencyStore) {}

  async refund(input: RefundInput): Promise<Refund> {
    const existing = await this.store.get(input.idempotencyKey);
    if (existing) return existing;

    assertRefundable(input);
    const refund = await this.gateway.createRefund(input.chargeId, input.amount);
    await this.store.put(\`\${input.chargeId}:\${input.idempotencyKey}\`, refund);
    return refund;
  }
}`;

export const paymentsRefund: AgentCase = {
  opening:
    "The replayed refund in `refund-service.test.ts:88` comes back with a **different id** (`re_3PqL8n…` instead of `re_3PqL8m…`), so the second call created a new refund instead of returning the stored one. I'll reproduce it, then look at how the idempotency key is written and read.",
  reproduce: {
    command: "npx vitest run services/api/src/refunds/refund-service.test.ts",
    description: "Reproduce the failing refund test",
    output: ` ❯ src/refunds/refund-service.test.ts (9 tests | 1 failed) 41ms
   × RefundService > returns the original refund when an idempotency key is replayed 13ms
     → expected { id: 're_9XbT2k4qPzR1mN0s7Lw', …(4) } to deeply equal { id: 're_9XbT2j8vHqR1mN0s3Ac', …(4) }

 Test Files  1 failed (1)
      Tests  1 failed | 8 passed (9)`,
    ms: 4_120,
    isError: true,
  },
  read: { path: "services/api/src/refunds/refund-service.ts", firstLine: 38, text: refundServiceBefore },
  grep: {
    pattern: "store\\.(get|put)\\(",
    path: "services/api/src",
    output: `services/api/src/refunds/refund-service.ts:42:    const existing = await this.store.get(input.idempotencyKey);
services/api/src/refunds/refund-service.ts:47:    await this.store.put(\`\${input.chargeId}:\${input.idempotencyKey}\`, refund);
services/api/src/charges/charge-service.ts:61:    const cached = await this.store.get(\`\${input.customerId}:\${input.idempotencyKey}\`);
services/api/src/charges/charge-service.ts:74:    await this.store.put(\`\${input.customerId}:\${input.idempotencyKey}\`, charge);`,
  },
  rootCause:
    "`RefundService.refund()` stores the refund under `${chargeId}:${idempotencyKey}` (line 47) but looks it up under the bare `idempotencyKey` (line 42), so a replay never finds it and creates a second refund.",
  diagnosis: `# Diagnosis: replayed refunds are not found in the idempotency store

**Check:** \`CI / unit-tests\` · **Test:** \`RefundService > returns the original refund when an idempotency key is replayed\`

## Root cause

\`services/api/src/refunds/refund-service.ts\` writes and reads the idempotency store under different keys:

| line | call | key |
| --- | --- | --- |
| 42 | \`store.get\` | \`input.idempotencyKey\` |
| 47 | \`store.put\` | \`\${input.chargeId}:\${input.idempotencyKey}\` |

A replay looks up \`key-1\`, finds nothing (the entry is \`ch_…:key-1\`), and calls \`gateway.createRefund\` again. In production this is the duplicate refund reported in #398: the change in this PR introduced the scoped key on write only.

## Fix

Compute the scoped key once and use it for both calls, as \`ChargeService\` already does (\`charge-service.ts:61,74\`). Scoping by charge is right: idempotency keys are only unique per charge in the mobile client.

## Similar failures

Same signature on the previous head of this PR (pipeline 11873649021); no occurrence on \`main\`.
`,
  closingDiagnose:
    "**Root cause:** the idempotency store is written under `chargeId:key` but read under `key` (`refund-service.ts:42` vs `:47`), so replays create a second refund.\n\nDiagnosis written to `diagnosis.md`.",
  fix: {
    changes: [
      {
        path: "services/api/src/refunds/refund-service.ts",
        firstLine: 38,
        before: refundServiceBefore,
        edits: [
          {
            old: "    const existing = await this.store.get(input.idempotencyKey);",
            new: "    const key = `${input.chargeId}:${input.idempotencyKey}`;\n    const existing = await this.store.get(key);",
          },
          { old: "await this.store.put(`${input.chargeId}:${input.idempotencyKey}`, refund);", new: "await this.store.put(key, refund);" },
        ],
      },
    ],
    verify: {
      command: "npx vitest run --project api",
      description: "Run the API test project",
      output: ` ✓ src/money/round.test.ts (14 tests) 8ms
 ✓ src/charges/charge-service.test.ts (22 tests) 39ms
 ✓ src/webhooks/stripe-signature.test.ts (6 tests) 11ms
 ✓ src/refunds/refund-service.test.ts (9 tests) 35ms

 Test Files  12 passed (12)
      Tests  187 passed (187)
   Duration  3.71s`,
      ms: 6_480,
    },
    review:
      "The key is now computed once and used for both get and put; matches ChargeService. No test changed. Existing entries written by this PR's code are already scoped, so no migration is needed.",
    commitMessage: "Read refund idempotency entries under the same scoped key they are written with",
    closingRepair:
      "Fixed: `refund()` now computes `chargeId:idempotencyKey` once and uses it for both `store.get` and `store.put`.\n\n- `vitest --project api`: **187 passed**\n- Patch: `fix.patch` (1 file, +3 −2), reviewed by the reviewer subagent\n\nRequesting approval to push the commit to `mchen/refund-idempotency`.",
  },
};

const roundBefore = `const MINOR_UNITS: Record<string, number> = { EUR: 2, USD: 2, GBP: 2 };

/** Rounds an amount in minor units to the currency's precision. */
export function roundMinor(amount: number, currency: CurrencyCode): number {
  const exponent: number = MINOR_UNITS[currency];
  if (exponent === 0) return Math.round(amount);
  const factor = 10 ** exponent;
  return Math.round(amount * factor) / factor;
}`;

export const paymentsTsc: AgentCase = {
  opening:
    "`tsc` reports three errors from this fork's change: `MINOR_UNITS[currency]` can be `undefined` under `noUncheckedIndexedAccess`, and the test passes `\"JPY\"`, which is not a `CurrencyCode` yet. This run is on the untrusted sandbox, so I only read and type-check; nothing is pushed.",
  reproduce: {
    command: "npx tsc -p services/api --noEmit",
    description: "Type-check the API service",
    output: `services/api/src/money/round.ts(27,9): error TS2322: Type 'number | undefined' is not assignable to type 'number'.
services/api/src/money/round.ts(31,37): error TS2538: Type 'undefined' cannot be used as an index type.
services/api/src/money/round.test.ts(12,34): error TS2345: Argument of type '"JPY"' is not assignable to parameter of type 'CurrencyCode'.

Found 3 errors in 2 files.`,
    ms: 9_870,
    isError: true,
  },
  read: { path: "services/api/src/money/round.ts", firstLine: 23, text: roundBefore },
  grep: {
    pattern: "export type CurrencyCode",
    path: "services/api/src",
    output: `services/api/src/money/currencies.ts:3:export type CurrencyCode = "EUR" | "USD" | "GBP";`,
  },
  rootCause:
    "The PR looks currencies up in `MINOR_UNITS: Record<string, number>` (undefined for unknown codes) and tests JPY without adding it to `CurrencyCode` in `currencies.ts`.",
  diagnosis: `# Diagnosis: zero-decimal currencies are not in the currency table

**Check:** \`CI / typecheck\` · fork PR from \`jdoe-contrib/payments-api\`

## Root cause

1. \`round.ts:27\`: \`MINOR_UNITS[currency]\` has type \`number | undefined\` (\`noUncheckedIndexedAccess\` is on), and the annotation \`: number\` hides nothing at runtime: an unknown currency would produce \`NaN\`.
2. \`round.test.ts:12\`: the new JPY case does not compile because \`CurrencyCode\` (\`currencies.ts:3\`) is still \`"EUR" | "USD" | "GBP"\`.

## Suggested fix (for the contributor)

- Add \`"JPY" | "KRW"\` to \`CurrencyCode\` and type the table as \`Record<CurrencyCode, number>\` with \`JPY: 0, KRW: 0\`; the lookup is then total and the annotation can go.
- Keep the zero-exponent early return.

Posting this as a review comment needs approval (bot comments are off for this repository).
`,
  closingDiagnose:
    "**Root cause:** `CurrencyCode` and the `MINOR_UNITS` table were not extended for JPY/KRW; the lookup is partial under `noUncheckedIndexedAccess`.\n\nThe fix belongs in the contributor's branch; the diagnosis is in `diagnosis.md`.",
  fix: {
    changes: [
      {
        path: "services/api/src/money/round.ts",
        firstLine: 23,
        before: roundBefore,
        edits: [
          { old: "const MINOR_UNITS: Record<string, number> = { EUR: 2, USD: 2, GBP: 2 };", new: "const MINOR_UNITS: Record<CurrencyCode, number> = { EUR: 2, USD: 2, GBP: 2, JPY: 0, KRW: 0 };" },
          { old: "  const exponent: number = MINOR_UNITS[currency];", new: "  const exponent = MINOR_UNITS[currency];" },
        ],
      },
    ],
    verify: { command: "npx tsc -p services/api --noEmit", description: "Type-check again", output: "", ms: 9_410 },
    review: "Pending: the reviewer has not run yet.",
    commitMessage: "Add zero-decimal currencies to the minor-unit table",
    closingRepair: "",
  },
};

export const reconcilerPytest: AgentCase = {
  opening:
    "`test_partial_settlement_keeps_remaining_balance` expects 37.50 left after receiving 82.50 of a 120.00 payout, but `settle()` returned status `SETTLED` with `remaining = 0.00`. Looking at how `settle()` decides the payout is complete.",
  reproduce: {
    command: "cd services/reconciler && pytest tests/test_settlement.py -x -q",
    description: "Reproduce the settlement test",
    output: `.......F
=================================== FAILURES ===================================
_______________ test_partial_settlement_keeps_remaining_balance ________________
>       assert result.remaining == Decimal("37.50")
E       AssertionError: assert Decimal('0.00') == Decimal('37.50')
tests/test_settlement.py:58: AssertionError
1 failed, 7 passed in 0.41s`,
    ms: 3_240,
    isError: true,
  },
  read: {
    path: "services/reconciler/reconciler/settlement.py",
    firstLine: 31,
    text: `def settle(ledger: Ledger, payout_id: str, received: Decimal) -> SettlementResult:
    payout = ledger.open_payout(payout_id)
    ledger.record_receipt(payout_id, received)
    if received > 0:
        ledger.close(payout_id)
        return SettlementResult(payout_id, SettlementStatus.SETTLED, Decimal("0.00"))
    remaining = payout.amount - ledger.received_total(payout_id)
    return SettlementResult(payout_id, SettlementStatus.PARTIAL, remaining)`,
  },
  rootCause:
    "`settle()` closes the payout whenever `received > 0` (settlement.py:34) instead of when the received total reaches the payout amount, so any partial transfer settles it.",
  diagnosis: `# Diagnosis: partial transfers settle the whole payout

**Check:** \`CI / reconciler-tests\` · **Test:** \`tests/test_settlement.py::test_partial_settlement_keeps_remaining_balance\`

## Root cause

\`reconciler/settlement.py:34\` tests \`received > 0\`, so the first transfer of any size closes the payout and reports \`remaining = 0.00\`. The remaining-balance branch below it is unreachable for positive receipts.

## Fix

Compute \`remaining = payout.amount - ledger.received_total(payout_id)\` first and close the payout only when \`remaining <= 0\`. Keep \`Decimal\` throughout; quantize to the currency exponent before comparing.

## Risk

Payouts closed early in production would need a backfill: query \`payout_receipts\` for payouts with receipts summing below their amount.
`,
  closingDiagnose:
    "**Root cause:** `settle()` closes the payout on any positive receipt (`settlement.py:34`) instead of when the total received covers the amount.\n\nDetails and a backfill note are in `diagnosis.md`.",
};

const backoffBefore = `func (b Backoff) Delay(attempt int) time.Duration {
	d := b.Base << uint(attempt)
	if d <= 0 || d > b.Max {
		d = b.Max
	}
	jitter := time.Duration(b.rand.Int63n(int64(d)))
	return d + jitter
}`;

export const relayGoTest: AgentCase = {
  opening:
    "`TestBackoffWithJitter/caps_at_max_delay` sees a 41.2 s delay with `MaxDelay` 30 s. The jitter looks like it is added *after* the cap. Reading `backoff.go`.",
  reproduce: {
    command: "cd services/webhook-relay && go test ./internal/retry/ -run TestBackoffWithJitter -count=1",
    description: "Reproduce the backoff test",
    output: `--- FAIL: TestBackoffWithJitter (0.00s)
    --- FAIL: TestBackoffWithJitter/caps_at_max_delay (0.00s)
        backoff_test.go:42: attempt 9: delay 55.804s exceeds MaxDelay 30s
FAIL
FAIL	github.com/acme/payments-api/services/webhook-relay/internal/retry	0.012s`,
    ms: 2_870,
    isError: true,
  },
  read: { path: "services/webhook-relay/internal/retry/backoff.go", firstLine: 14, text: backoffBefore },
  rootCause: "`Delay()` caps the exponential delay and then adds up to another `d` of jitter (backoff.go:19-20), so delays reach 2×Max; full jitter draws the whole delay from [0, d).",
  diagnosis: `# Diagnosis: jitter is added on top of the capped delay

**Check:** \`CI / relay-tests\` · **Test:** \`TestBackoffWithJitter/caps_at_max_delay\`

## Root cause

\`internal/retry/backoff.go:19-20\` returns \`d + rand[0, d)\` after capping \`d\` at \`Max\`, so any attempt past the cap waits between 30 s and 60 s. The test (and the PR description's "full jitter") expect \`rand[0, min(Max, Base·2ⁿ))\`.

## Fix options

1. **Full jitter:** \`return time.Duration(b.rand.Int63n(int64(d)))\`. Simple; the first retry can be immediate.
2. **Equal jitter:** \`d/2 + rand[0, d/2)\`: keeps a floor of half the delay.

The PR title asks for full jitter, but the relay's SLO doc expects a minimum spacing between retries; worth a maintainer's call.
`,
  closingDiagnose:
    "**Root cause:** jitter is added after the cap (`backoff.go:19-20`), so delays reach twice `MaxDelay`.\n\nTwo fix options in `diagnosis.md`; posting it to the PR needs approval.",
  comment:
    "**Airlock diagnosis** for `CI / relay-tests` at `tk/backoff-jitter`\n\nJitter is added after the cap in `internal/retry/backoff.go:19-20`, so delays reach 2× `MaxDelay`. Full jitter would be `rand[0, min(Max, Base·2ⁿ))`; equal jitter keeps a floor of half the delay. Details: diagnosis artifact on the run.",
  fix: {
    changes: [
      {
        path: "services/webhook-relay/internal/retry/backoff.go",
        firstLine: 14,
        before: backoffBefore,
        edits: [{ old: "\tjitter := time.Duration(b.rand.Int63n(int64(d)))\n\treturn d + jitter", new: "\t// Full jitter: the whole delay is drawn from [0, d).\n\treturn time.Duration(b.rand.Int63n(int64(d)))" }],
      },
    ],
    verify: {
      command: "cd services/webhook-relay && go test ./... -race -count=1",
      description: "Run the relay's tests",
      output: `ok  	github.com/acme/payments-api/services/webhook-relay/internal/retry	0.015s
ok  	github.com/acme/payments-api/services/webhook-relay/internal/relay	0.091s
ok  	github.com/acme/payments-api/services/webhook-relay/internal/signing	0.020s`,
      ms: 11_300,
    },
    review: "Correct for full jitter and the test passes, but attempt 0 may now retry immediately; the SLO doc asks for ≥ Base/2 between retries. Flagging for the maintainer.",
    commitMessage: "webhook-relay: draw the whole backoff delay from [0, d) (full jitter)",
    closingRepair:
      "Applied full jitter in `backoff.go`; `go test ./... -race` passes.\n\n⚠️ The reviewer notes the first retry can now be immediate, which the relay SLO doc discourages. Requesting approval to push; a maintainer may prefer equal jitter.",
  },
};
