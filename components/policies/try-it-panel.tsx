"use client";

import { useMutation } from "@tanstack/react-query";
import { useState } from "react";
import { useFormContext } from "react-hook-form";
import {
  zFactSource,
  zPolicyDefinition,
  type FactSource,
  type Facts,
  type PolicyDefinition,
  type PolicyDefinitionInput,
  type PropertyDefinition,
  type Scalar,
} from "@/server/domain/policy/schemas";
import type { PolicyKind } from "@/server/db/generated/enums";
import { useTRPC } from "@/components/providers/trpc";
import { Alert } from "@/components/ui/alert";
import { Button } from "@/components/ui/button";
import { useHydrated } from "@/components/ui/use-hydrated";
import { defaultValue } from "./condition-model";
import { ProofTree, sourceLabel } from "./proof-tree";
import { ValuePicker, controlClass } from "./value-picker";

// Enter facts with pickers, each with where it came from, and see the decision and its proof
// for the rules as they are in the form (saved or not). Nothing is stored.

type Entry = { on: boolean; value: Scalar; source: FactSource };

function initialEntries(properties: PropertyDefinition[]): Record<string, Entry> {
  return Object.fromEntries(
    properties
      .filter((p) => !p.rulesOnly)
      .map((p) => [p.name, { on: p.cardinality === "1", value: defaultValue(p), source: "webhook" as FactSource }]),
  );
}

export function TryItPanel({ kind, properties, dirty }: { kind: PolicyKind; properties: PropertyDefinition[]; dirty: boolean }) {
  const trpc = useTRPC();
  const { getValues } = useFormContext<PolicyDefinitionInput, unknown, PolicyDefinition>();
  const [entries, setEntries] = useState(() => initialEntries(properties));
  const [usedUnsaved, setUsedUnsaved] = useState(false);
  const tryIt = useMutation(trpc.policies.tryIt.mutationOptions());
  // Facts picked before hydration would be reset by it, and Evaluate would do nothing.
  const hydrated = useHydrated();
  const facts = properties.filter((p) => !p.rulesOnly);

  const update = (name: string, patch: Partial<Entry>) =>
    setEntries((prev) => {
      const current = prev[name];
      return current ? { ...prev, [name]: { ...current, ...patch } } : prev;
    });

  const run = () => {
    const given: Facts = {};
    for (const [name, entry] of Object.entries(entries)) {
      if (entry.on) given[name] = { value: entry.value, source: entry.source };
    }
    // The form's rules when they parse; otherwise the saved version.
    const parsed = zPolicyDefinition.safeParse(getValues());
    setUsedUnsaved(parsed.success && dirty);
    tryIt.mutate({ kind, facts: given, ...(parsed.success && dirty ? { definition: parsed.data } : {}) });
  };

  return (
    <section aria-label="Try it" className="space-y-3">
      <h2 className="text-xs font-semibold tracking-wide text-zinc-500 uppercase">Try it</h2>
      <p className="text-xs text-zinc-500">Unchecked facts are absent and read under the closed world.</p>
      <fieldset disabled={!hydrated} className="min-w-0 space-y-3">
        <ul className="space-y-2">
          {facts.map((property) => {
            const entry = entries[property.name];
            if (!entry) return null;
            return (
              <li key={property.name} role="group" aria-label={`Fact ${property.name}`} className="flex flex-wrap items-center gap-2">
                <label className="flex w-44 items-center gap-1.5 font-mono text-xs">
                  <input type="checkbox" checked={entry.on} onChange={(e) => update(property.name, { on: e.target.checked })} aria-label={`Set ${property.name}`} />
                  {property.name}
                  {property.cardinality === "1" && <span className="text-red-600" title="required">*</span>}
                </label>
                <ValuePicker property={property} value={entry.value} disabled={!entry.on} onChange={(value) => update(property.name, { value, on: true })} />
                <select
                  aria-label="Source"
                  className={controlClass}
                  disabled={!entry.on}
                  value={entry.source}
                  onChange={(e) => update(property.name, { source: e.target.value as FactSource })}
                >
                  {zFactSource.options.map((s) => (
                    <option key={s} value={s}>
                      {sourceLabel[s]}
                    </option>
                  ))}
                </select>
              </li>
            );
          })}
        </ul>
        <Button type="button" variant="primary" size="sm" onClick={run} disabled={tryIt.isPending}>
          {tryIt.isPending ? "Evaluating…" : "Evaluate"}
        </Button>
      </fieldset>

      {tryIt.error && <Alert>{tryIt.error.message}</Alert>}
      {tryIt.data && (
        <div className="space-y-2" aria-live="polite" data-testid="try-it-result">
          <p className="text-xs text-zinc-500">{usedUnsaved ? "Evaluated against your unsaved edits." : "Evaluated against the saved version."}</p>
          {tryIt.data.refused.length > 0 && (
            <Alert as="div" variant="banner">
              The policy refuses these facts, so it decides nothing (callers fail closed):
              <ul className="mt-1 list-disc pl-5">
                {tryIt.data.refused.map((v) => (
                  <li key={`${v.property}-${v.constraint}`}>
                    {v.message} <span className="font-mono text-xs">[{v.constraint}]</span>
                  </li>
                ))}
              </ul>
            </Alert>
          )}
          {tryIt.data.decisions.map((decision) => (
            <ProofTree key={decision.property} decision={decision} />
          ))}
        </div>
      )}
    </section>
  );
}
