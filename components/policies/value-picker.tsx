"use client";

import type { PropertyDefinition, Scalar } from "@/server/domain/policy/schemas";
import { cn } from "@/components/ui/cn";

// Typed value inputs: an enum is a select, a boolean true/false, an integer a number input
// within the property's bounds, a string a text input. Lists use checkboxes where the values
// are known (enum, boolean) and one entry per line otherwise.

export const controlClass =
  "h-8 rounded-md border border-zinc-300 bg-white px-2 text-sm disabled:bg-zinc-50 disabled:text-zinc-500 dark:border-zinc-700 dark:bg-zinc-900 dark:disabled:bg-zinc-900/50";

type PickerProps = {
  property: PropertyDefinition;
  value: Scalar;
  onChange: (value: Scalar) => void;
  label?: string;
  disabled?: boolean;
  className?: string;
};

export function ValuePicker({ property, value, onChange, label = "Value", disabled, className }: PickerProps) {
  switch (property.type) {
    case "enum":
      return (
        <select aria-label={label} className={cn(controlClass, className)} disabled={disabled} value={String(value)} onChange={(e) => onChange(e.target.value)}>
          {!property.values.includes(String(value)) && <option value={String(value)}>{String(value)} (not a value)</option>}
          {property.values.map((v) => (
            <option key={v} value={v}>
              {v}
            </option>
          ))}
        </select>
      );
    case "boolean":
      return (
        <select aria-label={label} className={cn(controlClass, className)} disabled={disabled} value={String(value)} onChange={(e) => onChange(e.target.value === "true")}>
          <option value="true">true</option>
          <option value="false">false</option>
        </select>
      );
    case "integer":
      return <IntegerInput property={property} value={value} onChange={onChange} label={label} disabled={disabled} className={className} />;
    case "string":
      return (
        <input
          aria-label={label}
          className={cn(controlClass, "w-40", className)}
          disabled={disabled}
          value={String(value)}
          onChange={(e) => onChange(e.target.value)}
        />
      );
  }
}

function IntegerInput({ property, value, onChange, label, disabled, className }: PickerProps) {
  const bounds = property.type === "integer" ? property : { min: undefined, max: undefined };
  const hint = `${bounds.min ?? "−∞"} … ${bounds.max ?? "∞"}`;
  return (
    <input
      type="number"
      step={1}
      min={bounds.min}
      max={bounds.max}
      title={`An integer in ${hint}`}
      aria-label={label}
      className={cn(controlClass, "w-24 tabular-nums", className)}
      disabled={disabled}
      value={typeof value === "number" && Number.isFinite(value) ? value : ""}
      // An empty or partial entry becomes NaN, which the schema reports; it is never sent.
      onChange={(e) => onChange(e.target.value === "" ? Number.NaN : e.target.valueAsNumber)}
    />
  );
}

type ListProps = {
  property: PropertyDefinition;
  value: Scalar[];
  onChange: (value: Scalar[]) => void;
  disabled?: boolean;
};

export function ListPicker({ property, value, onChange, disabled }: ListProps) {
  if (property.type === "enum" || property.type === "boolean") {
    const options: Scalar[] = property.type === "enum" ? property.values : [true, false];
    return (
      <fieldset aria-label="Values" className="flex flex-wrap items-center gap-x-3 gap-y-1 text-sm">
        {options.map((option) => {
          const checked = value.includes(option);
          return (
            <label key={String(option)} className="inline-flex items-center gap-1">
              <input
                type="checkbox"
                disabled={disabled || (checked && value.length === 1)}
                checked={checked}
                onChange={(e) =>
                  onChange(e.target.checked ? options.filter((o) => o === option || value.includes(o)) : value.filter((v) => v !== option))
                }
              />
              {String(option)}
            </label>
          );
        })}
      </fieldset>
    );
  }
  const numeric = property.type === "integer";
  return (
    <textarea
      aria-label="Values, one per line"
      rows={Math.min(4, Math.max(2, value.length))}
      className="w-48 rounded-md border border-zinc-300 bg-white px-2 py-1 font-mono text-xs dark:border-zinc-700 dark:bg-zinc-900"
      disabled={disabled}
      value={value.map(String).join("\n")}
      onChange={(e) => {
        const lines = e.target.value.split("\n");
        onChange(numeric ? lines.filter((l) => l.trim() !== "").map((l) => Number(l.trim())) : lines);
      }}
    />
  );
}
