"use client";

import { useId } from "react";
import { get, useFormContext, type RegisterOptions } from "react-hook-form";
import { Alert } from "@/components/ui/alert";
import { Button } from "@/components/ui/button";
import { cn } from "@/components/ui/cn";

// Labelled controls bound to the surrounding FormProvider by field path. Each shows its own
// error (client or server) under it, wired with aria-invalid and aria-describedby.

export const inputClass =
  "block w-full rounded-md border border-zinc-300 bg-white px-2.5 py-1.5 text-sm shadow-xs outline-none focus:border-indigo-500 focus:ring-2 focus:ring-indigo-500/30 disabled:cursor-not-allowed disabled:bg-zinc-100 disabled:text-zinc-500 aria-invalid:border-red-500 dark:border-zinc-700 dark:bg-zinc-900 dark:disabled:bg-zinc-800";

export function useFieldError(name: string): string | undefined {
  const { formState } = useFormContext();
  const error = get(formState.errors, name) as { message?: string; root?: { message?: string } } | undefined;
  return error?.message ?? error?.root?.message;
}

export function FieldError({ id, message }: { id: string; message: string | undefined }) {
  if (!message) return null;
  return (
    <Alert id={id} className="mt-1 text-xs">
      {message}
    </Alert>
  );
}

type BaseProps = { name: string; label: string; hint?: string; className?: string; disabled?: boolean };

/** A label over its control, with a hint and an error under it (also for forms outside a FormProvider). */
export function FieldShell({ id, label, hint, error, className, children }: { id: string; label: React.ReactNode; hint?: string; error?: string; className?: string; children: React.ReactNode }) {
  return (
    <div className={cn("min-w-0", className)}>
      <label htmlFor={id} className="mb-1 block text-xs font-medium text-zinc-700 dark:text-zinc-300">
        {label}
      </label>
      {children}
      {hint && (
        <p id={`${id}-hint`} className="mt-1 text-xs text-zinc-500">
          {hint}
        </p>
      )}
      <FieldError id={`${id}-error`} message={error} />
    </div>
  );
}

const describedBy = (id: string, hint?: string, error?: string) => [hint && `${id}-hint`, error && `${id}-error`].filter(Boolean).join(" ") || undefined;

export function TextField({ name, label, hint, className, disabled, type = "text", placeholder, mono, rules }: BaseProps & { type?: string; placeholder?: string; mono?: boolean; rules?: RegisterOptions }) {
  const id = useId();
  const { register } = useFormContext();
  const error = useFieldError(name);
  return (
    <FieldShell id={id} label={label} hint={hint} error={error} className={className}>
      <input
        id={id}
        type={type}
        placeholder={placeholder}
        disabled={disabled}
        aria-invalid={error ? true : undefined}
        aria-describedby={describedBy(id, hint, error)}
        className={cn(inputClass, mono && "font-mono")}
        {...register(name, rules)}
      />
    </FieldShell>
  );
}

/** `nullable`: an empty field is null (none), not NaN. */
export function NumberField({ name, label, hint, className, disabled, step, nullable }: BaseProps & { step?: string; nullable?: boolean }) {
  const id = useId();
  const { register } = useFormContext();
  const error = useFieldError(name);
  return (
    <FieldShell id={id} label={label} hint={hint} error={error} className={className}>
      <input
        id={id}
        type="number"
        step={step ?? "1"}
        disabled={disabled}
        aria-invalid={error ? true : undefined}
        aria-describedby={describedBy(id, hint, error)}
        className={inputClass}
        {...register(name, nullable ? { setValueAs: (v: unknown) => (v === "" || v === null || v === undefined ? null : Number(v)) } : { valueAsNumber: true })}
      />
    </FieldShell>
  );
}

export function TextAreaField({ name, label, hint, className, disabled, rows = 4, mono }: BaseProps & { rows?: number; mono?: boolean }) {
  const id = useId();
  const { register } = useFormContext();
  const error = useFieldError(name);
  return (
    <FieldShell id={id} label={label} hint={hint} error={error} className={className}>
      <textarea
        id={id}
        rows={rows}
        disabled={disabled}
        aria-invalid={error ? true : undefined}
        aria-describedby={describedBy(id, hint, error)}
        className={cn(inputClass, mono && "font-mono text-xs leading-5")}
        {...register(name)}
      />
    </FieldShell>
  );
}

export type Option = { value: string; label: string; disabled?: boolean };

export function SelectField({ name, label, hint, className, disabled, options, onValueChange }: BaseProps & { options: readonly Option[]; onValueChange?: (value: string) => void }) {
  const id = useId();
  const { register } = useFormContext();
  const error = useFieldError(name);
  const field = register(name, { onChange: (e: React.ChangeEvent<HTMLSelectElement>) => onValueChange?.(e.target.value) });
  return (
    <FieldShell id={id} label={label} hint={hint} error={error} className={className}>
      <select id={id} disabled={disabled} aria-invalid={error ? true : undefined} aria-describedby={describedBy(id, hint, error)} className={inputClass} {...field}>
        {options.map((o) => (
          <option key={o.value} value={o.value} disabled={o.disabled}>
            {o.label}
          </option>
        ))}
      </select>
    </FieldShell>
  );
}

export function CheckboxField({ name, label, hint, className, disabled }: BaseProps) {
  const id = useId();
  const { register } = useFormContext();
  const error = useFieldError(name);
  return (
    <div className={cn("flex items-start gap-2", className)}>
      <input
        id={id}
        type="checkbox"
        disabled={disabled}
        aria-invalid={error ? true : undefined}
        aria-describedby={describedBy(id, hint, error)}
        className="mt-0.5 size-4 rounded border-zinc-300 text-indigo-600 focus:ring-indigo-500"
        {...register(name)}
      />
      <div>
        <label htmlFor={id} className="text-sm text-zinc-800 dark:text-zinc-200">
          {label}
        </label>
        {hint && (
          <p id={`${id}-hint`} className="text-xs text-zinc-500">
            {hint}
          </p>
        )}
        <FieldError id={`${id}-error`} message={error} />
      </div>
    </div>
  );
}

/** A dialog form's footer: Close, and its submit button, which says what it is doing while pending. */
export function DialogActions({ onClose, pending, label, pendingLabel }: { onClose: () => void; pending: boolean; label: string; pendingLabel: string }) {
  return (
    <div className="flex justify-end gap-2">
      <Button type="button" onClick={onClose}>
        Close
      </Button>
      <Button type="submit" variant="primary" disabled={pending}>
        {pending ? pendingLabel : label}
      </Button>
    </div>
  );
}
