"use client";

import { Alert } from "@/components/ui/alert";
import { Badge } from "@/components/ui/badge";
import type { PolicyReview } from "./types";

// The live check results beside the rules: model violations (which block saving), then
// conflicts, gaps and vacuous rules, each with an example fact set. Findings are shown, never
// folded away: an intended overlap and an oversight look the same until someone reads them.

type Region = NonNullable<PolicyReview["checks"]>["conflicts"][number]["region"];

export type CheckState = {
  review: PolicyReview;
  /** Schema errors in the form; the checks wait until there are none. */
  formErrors: string[];
  pending: boolean;
  error: string | null;
};

function Where({ region }: { region: Region }) {
  if (region.where.length === 0) return <span>every fact set</span>;
  return (
    <span>
      {region.where.map(({ property, cells }, i) => (
        <span key={property}>
          {i > 0 && " and "}
          <span className="font-mono text-xs">{property}</span>{" "}
          {cells.length === 1 ? `= ${cells[0]?.label}` : `∈ {${cells.map((c) => c.label).join(", ")}}`}
        </span>
      ))}
    </span>
  );
}

export function ExampleFacts({ region }: { region: Region }) {
  const entries = Object.entries(region.example);
  return (
    <div className="mt-1 flex flex-wrap items-center gap-1 text-xs" data-testid="example-facts">
      <span className="text-zinc-500">e.g.</span>
      {entries.map(([name, value]) => (
        <code key={name} className="rounded bg-zinc-100 px-1 dark:bg-zinc-800">
          {name} = {String(value)}
        </code>
      ))}
      <span className="text-zinc-500">{entries.length === 0 ? "no facts at all" : "(others absent)"}</span>
    </div>
  );
}

function Section({ title, count, tone, children, empty }: { title: string; count: number; tone: "danger" | "warning"; children: React.ReactNode; empty: string }) {
  return (
    <section aria-label={title} className="space-y-1.5">
      <h3 className="flex items-center gap-2 text-sm font-semibold">
        {title} <Badge tone={count > 0 ? tone : "success"}>{count}</Badge>
      </h3>
      {count === 0 ? <p className="text-sm text-zinc-500">{empty}</p> : <ul className="space-y-2">{children}</ul>}
    </section>
  );
}

const vacuousReason = {
  never_matches: "can never match",
  redundant: "only restates what earlier rules decide",
  overridden: "is always overridden",
} as const;

export function CheckPanel({ state }: { state: CheckState }) {
  const { review, formErrors, pending, error } = state;
  const checks = review.checks;
  return (
    <div aria-label="Checks" aria-busy={pending} className="space-y-4" data-testid="check-panel">
      <div className="flex items-center justify-between">
        <h2 className="text-xs font-semibold tracking-wide text-zinc-500 uppercase">Checks</h2>
        <span className="text-xs text-zinc-500" aria-live="polite">
          {pending ? "checking…" : error ? "check failed" : "up to date"}
        </span>
      </div>
      {error && <Alert>{error}</Alert>}

      {formErrors.length > 0 && (
        <Alert as="section" role="region" aria-label="Form errors" variant="banner">
          <p className="font-medium">Fix these before the checks can run:</p>
          <ul className="mt-1 list-disc pl-5">
            {formErrors.map((e) => <li key={e}>{e}</li>)}
          </ul>
        </Alert>
      )}

      <Section title="Model violations" count={review.issues.length} tone="danger" empty="The rules fit the model.">
        {review.issues.map((issue, i) => (
          <li key={i} className="text-sm text-red-700 dark:text-red-400">
            {issue.message}
          </li>
        ))}
      </Section>

      {review.checkError && <Alert role="status" tone="warning">{review.checkError}</Alert>}
      {checks && (
        <>
          <Section title="Conflicts" count={checks.conflicts.length} tone="warning" empty="No conflicts: no two rules can both fire with different conclusions.">
            {checks.conflicts.map((c) => (
              <li key={c.rules.join("|")} className="rounded-md border border-amber-200 p-2 text-sm dark:border-amber-900" data-testid="conflict">
                <div>
                  <span className="font-mono text-xs">{c.rules[0]}</span> → {String(c.conclusions[0])} and{" "}
                  <span className="font-mono text-xs">{c.rules[1]}</span> → {String(c.conclusions[1])} both match where <Where region={c.region} />.
                </div>
                <ExampleFacts region={c.region} />
                <div className="mt-1 text-xs text-zinc-600 dark:text-zinc-400">
                  {c.decidedBy === "priority" ? "Priority" : "Listing order (equal priorities)"} picks <strong className="font-mono">{c.picked}</strong>.
                </div>
              </li>
            ))}
          </Section>
          <Section title="Gaps" count={checks.gaps.length} tone="warning" empty="No gaps: some rule covers every fact set.">
            {checks.gaps.map((g, i) => (
              <li key={i} className="rounded-md border border-amber-200 p-2 text-sm dark:border-amber-900" data-testid="gap">
                <div>
                  No rule decides <span className="font-mono text-xs">{g.property}</span> where <Where region={g.region} />; the default{" "}
                  <strong>{String(g.fallback.value)}</strong> applies.
                </div>
                <ExampleFacts region={g.region} />
              </li>
            ))}
          </Section>
          <Section title="Vacuous rules" count={checks.vacuous.length} tone="warning" empty="Every rule decides somewhere.">
            {checks.vacuous.map((v) => (
              <li key={v.rule} className="rounded-md border border-amber-200 p-2 text-sm dark:border-amber-900" data-testid="vacuous">
                <span className="font-mono text-xs">{v.rule}</span> {vacuousReason[v.reason]}
                {v.overriddenBy.length > 0 && (
                  <>
                    {" "}by <span className="font-mono text-xs">{v.overriddenBy.join(", ")}</span>
                  </>
                )}
                .
              </li>
            ))}
          </Section>
        </>
      )}
    </div>
  );
}
