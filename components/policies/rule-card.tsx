"use client";

import { ArrowDown, ArrowUp, Trash2 } from "lucide-react";
import { Controller, useFormContext, useWatch } from "react-hook-form";
import type { PolicyDefinition, PolicyDefinitionInput, PropertyDefinition } from "@/server/domain/policy/schemas";
import { Badge } from "@/components/ui/badge";
import { Button } from "@/components/ui/button";
import { cardVariants } from "@/components/ui/card";
import { cn } from "@/components/ui/cn";
import { ConditionEditor } from "./condition-editor";
import { defaultValue } from "./condition-model";
import { ValuePicker, controlClass } from "./value-picker";

// One rule in the form: name, priority, condition tree, conclusion and explanation, with what
// the live checks say about it (conflicts it is part of, whether it is vacuous).

export type RuleFindings = { conflicts: string[]; vacuous: string | null };

type Props = {
  index: number;
  count: number;
  properties: PropertyDefinition[];
  disabled: boolean;
  findings: RuleFindings;
  onMove: (to: number) => void;
  onRemove: () => void;
};

function FieldError({ message }: { message?: string }) {
  return message ? <p className="text-xs text-red-600">{message}</p> : null;
}

export function RuleCard({ index, count, properties, disabled, findings, onMove, onRemove }: Props) {
  const { register, control, formState } = useFormContext<PolicyDefinitionInput, unknown, PolicyDefinition>();
  const name = useWatch({ control, name: `rules.${index}.name` });
  const errors = formState.errors.rules?.[index];
  const concluded = properties.filter((p) => p.rulesOnly);
  const headingId = `rule-${index}-heading`;

  return (
    <section
      aria-labelledby={headingId}
      data-testid={`rule-${index}`}
      className={cn(
        cardVariants({ padding: "sm" }),
        "space-y-3",
        findings.conflicts.length > 0 && "border-amber-300 dark:border-amber-800",
      )}
    >
      <div className="flex flex-wrap items-center gap-2">
        <h3 id={headingId} className="text-sm font-semibold">
          <span className="mr-1 text-zinc-400">Rule {index + 1}</span>
          <span className="font-mono">{name || "(unnamed)"}</span>
        </h3>
        {findings.conflicts.length > 0 && (
          <Badge tone="warning" className="whitespace-normal" title={findings.conflicts.join(", ")}>
            conflicts with {findings.conflicts.length > 2 ? `${findings.conflicts.length} rules` : findings.conflicts.join(", ")}
          </Badge>
        )}
        {findings.vacuous && <Badge tone="warning">vacuous: {findings.vacuous}</Badge>}
        <div className="ml-auto flex gap-1">
          <Button type="button" size="sm" variant="ghost" aria-label="Move rule up" disabled={disabled || index === 0} onClick={() => onMove(index - 1)}>
            <ArrowUp className="size-3.5" />
          </Button>
          <Button type="button" size="sm" variant="ghost" aria-label="Move rule down" disabled={disabled || index === count - 1} onClick={() => onMove(index + 1)}>
            <ArrowDown className="size-3.5" />
          </Button>
          <Button type="button" size="sm" variant="ghost" aria-label="Remove rule" disabled={disabled} onClick={onRemove}>
            <Trash2 className="size-3.5" />
          </Button>
        </div>
      </div>

      <div className="grid grid-cols-1 gap-3 sm:grid-cols-[1fr_8rem]">
        <label className="space-y-1 text-xs text-zinc-500">
          Name
          <input {...register(`rules.${index}.name`)} className={cn(controlClass, "block w-full font-mono")} disabled={disabled} />
          <FieldError message={errors?.name?.message} />
        </label>
        <label className="space-y-1 text-xs text-zinc-500">
          Priority
          <input
            type="number"
            step={1}
            {...register(`rules.${index}.priority`, { valueAsNumber: true })}
            className={cn(controlClass, "block w-full tabular-nums")}
            disabled={disabled}
          />
          <FieldError message={errors?.priority?.message} />
        </label>
      </div>

      <div className="space-y-1">
        <div className="text-xs text-zinc-500">When</div>
        <Controller
          control={control}
          name={`rules.${index}.when`}
          render={({ field }) => <ConditionEditor value={field.value} onChange={field.onChange} properties={properties} disabled={disabled} />}
        />
        <FieldError message={errors?.when?.message} />
      </div>

      <div className="space-y-1">
        <div className="text-xs text-zinc-500">Then</div>
        <Controller
          control={control}
          name={`rules.${index}.then`}
          render={({ field }) => {
            const property = concluded.find((p) => p.name === field.value.property);
            return (
              <div className="flex flex-wrap items-center gap-2">
                <select
                  aria-label="Conclusion property"
                  className={controlClass}
                  disabled={disabled}
                  value={field.value.property}
                  onChange={(e) => {
                    const next = concluded.find((p) => p.name === e.target.value);
                    if (next) field.onChange({ property: next.name, value: defaultValue(next, field.value.value) });
                  }}
                >
                  {!property && <option value={field.value.property}>{field.value.property} (not decided by rules)</option>}
                  {concluded.map((p) => (
                    <option key={p.name} value={p.name}>
                      {p.name}
                    </option>
                  ))}
                </select>
                <span className="text-sm text-zinc-500">=</span>
                {property && (
                  <ValuePicker
                    label="Conclusion value"
                    property={property}
                    value={field.value.value}
                    disabled={disabled}
                    onChange={(value) => field.onChange({ property: property.name, value })}
                  />
                )}
              </div>
            );
          }}
        />
      </div>

      <label className="block space-y-1 text-xs text-zinc-500">
        Explanation
        <input {...register(`rules.${index}.explanation`)} className={cn(controlClass, "block w-full")} disabled={disabled} />
        <FieldError message={errors?.explanation?.message} />
      </label>
    </section>
  );
}
