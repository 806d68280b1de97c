"use client";

import { Plus } from "lucide-react";
import { useFieldArray, useFormContext } from "react-hook-form";
import type { PolicyDefinition, PolicyDefinitionInput, PropertyDefinition } from "@/server/domain/policy/schemas";
import { Button } from "@/components/ui/button";
import type { CheckState } from "./check-panel";
import { defaultValue, newLeaf } from "./condition-model";
import { RuleCard, type RuleFindings } from "./rule-card";

// The list of rules as a field array. Order matters (it breaks ties between equal priorities),
// so rules can be moved as well as added and removed.

function findingsFor(name: string | undefined, checks: CheckState["review"]["checks"]): RuleFindings {
  if (!name || !checks) return { conflicts: [], vacuous: null };
  const conflicts = checks.conflicts.filter((c) => c.rules.includes(name)).map((c) => (c.rules[0] === name ? c.rules[1] : c.rules[0]));
  const vacuous = checks.vacuous.find((v) => v.rule === name);
  return { conflicts: [...new Set(conflicts)], vacuous: vacuous ? vacuous.reason.replace("_", " ") : null };
}

export function RulesEditor({ properties, disabled, checks }: { properties: PropertyDefinition[]; disabled: boolean; checks: CheckState["review"]["checks"] }) {
  const { control, getValues } = useFormContext<PolicyDefinitionInput, unknown, PolicyDefinition>();
  const { fields, append, remove, move } = useFieldArray({ control, name: "rules" });
  const concluded = properties.find((p) => p.rulesOnly);

  const addRule = () => {
    const when = newLeaf(properties);
    if (!when || !concluded) return;
    const taken = new Set(getValues("rules").map((r) => r.name));
    let n = fields.length + 1;
    while (taken.has(`new_rule_${n}`)) n++;
    append({ name: `new_rule_${n}`, priority: 0, when, then: { property: concluded.name, value: defaultValue(concluded) }, explanation: "" });
  };

  return (
    <div className="space-y-3">
      {fields.map((field, index) => (
        <RuleCard
          key={field.id}
          index={index}
          count={fields.length}
          properties={properties}
          disabled={disabled}
          findings={findingsFor(getValues(`rules.${index}.name`), checks)}
          onMove={(to) => move(index, to)}
          onRemove={() => remove(index)}
        />
      ))}
      {fields.length === 0 && <p className="text-sm text-zinc-500">No rules: every decision is the fail-closed default.</p>}
      {!disabled && (
        <Button type="button" onClick={addRule}>
          <Plus className="size-4" /> Add rule
        </Button>
      )}
    </div>
  );
}
