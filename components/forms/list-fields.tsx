"use client";

import { Plus, X } from "lucide-react";
import { useId } from "react";
import { get, useController, useFormContext } from "react-hook-form";
import { Button } from "@/components/ui/button";
import { cn } from "@/components/ui/cn";
import { FieldError, inputClass, useFieldError } from "./fields";

// Lists of plain strings (argv items, tool names, environment names, path filters) and
// multi-selects of enum values. react-hook-form's useFieldArray only manages lists of objects, so
// these keep the schema's own `string[]` through a controller: the form value is exactly what
// the zod schema validates, and each item shows its own error.

type ListProps = {
  name: string;
  label: string;
  hint?: string;
  /** The accessible name of each item's input, e.g. "Argument" -> "Argument 2". */
  itemLabel: string;
  addLabel: string;
  placeholder?: string;
  disabled?: boolean;
  mono?: boolean;
  className?: string;
};

export function StringListField({ name, label, hint, itemLabel, addLabel, placeholder, disabled, mono, className }: ListProps) {
  const id = useId();
  const { control, formState } = useFormContext();
  const { field } = useController({ control, name });
  const items = (Array.isArray(field.value) ? field.value : []) as string[];
  const listError = useFieldError(name);
  const set = (next: string[]) => field.onChange(next);
  return (
    <fieldset className={cn("min-w-0", className)} aria-describedby={hint ? `${id}-hint` : undefined}>
      <legend className="mb-1 text-xs font-medium text-zinc-700 dark:text-zinc-300">{label}</legend>
      {hint && (
        <p id={`${id}-hint`} className="mb-1 text-xs text-zinc-500">
          {hint}
        </p>
      )}
      <ol className="space-y-1">
        {items.map((item, i) => {
          const error = (get(formState.errors, `${name}.${i}`) as { message?: string } | undefined)?.message;
          const inputId = `${id}-${i}`;
          return (
            <li key={i} className="flex items-start gap-1">
              <div className="min-w-0 flex-1">
                <input
                  id={inputId}
                  aria-label={`${itemLabel} ${i + 1}`}
                  value={item}
                  placeholder={placeholder}
                  disabled={disabled}
                  aria-invalid={error ? true : undefined}
                  aria-describedby={error ? `${inputId}-error` : undefined}
                  className={cn(inputClass, mono && "font-mono text-xs")}
                  onChange={(e) => set(items.map((v, j) => (j === i ? e.target.value : v)))}
                  onBlur={field.onBlur}
                />
                <FieldError id={`${inputId}-error`} message={error} />
              </div>
              <Button type="button" size="sm" variant="ghost" disabled={disabled} aria-label={`Remove ${itemLabel.toLowerCase()} ${i + 1}`} onClick={() => set(items.filter((_, j) => j !== i))}>
                <X className="size-3.5" aria-hidden />
              </Button>
            </li>
          );
        })}
      </ol>
      {items.length === 0 && <p className="text-xs text-zinc-500 italic">None.</p>}
      <Button type="button" size="sm" variant="ghost" className="mt-1" disabled={disabled} onClick={() => set([...items, ""])}>
        <Plus className="size-3.5" aria-hidden /> {addLabel}
      </Button>
      <FieldError id={`${id}-error`} message={listError} />
    </fieldset>
  );
}

export function CheckboxGroupField({
  name,
  label,
  hint,
  options,
  disabled,
  className,
}: {
  name: string;
  label: string;
  hint?: string;
  options: readonly { value: string; label: string }[];
  disabled?: boolean;
  className?: string;
}) {
  const id = useId();
  const { control } = useFormContext();
  const { field } = useController({ control, name });
  const selected = (Array.isArray(field.value) ? field.value : []) as string[];
  const error = useFieldError(name);
  return (
    <fieldset className={cn("min-w-0", className)} aria-describedby={[hint && `${id}-hint`, error && `${id}-error`].filter(Boolean).join(" ") || undefined}>
      <legend className="mb-1 text-xs font-medium text-zinc-700 dark:text-zinc-300">{label}</legend>
      {hint && (
        <p id={`${id}-hint`} className="mb-1 text-xs text-zinc-500">
          {hint}
        </p>
      )}
      <div className="flex flex-wrap gap-x-4 gap-y-1">
        {options.map((o) => (
          <label key={o.value} className="flex items-center gap-1.5 text-sm">
            <input
              type="checkbox"
              disabled={disabled}
              checked={selected.includes(o.value)}
              className="size-4 rounded border-zinc-300 text-indigo-600"
              onChange={(e) => field.onChange(e.target.checked ? [...selected, o.value] : selected.filter((v) => v !== o.value))}
              onBlur={field.onBlur}
            />
            {o.label}
          </label>
        ))}
      </div>
      <FieldError id={`${id}-error`} message={error} />
    </fieldset>
  );
}
