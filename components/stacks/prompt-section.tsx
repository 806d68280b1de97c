"use client";

import { useId, useRef } from "react";
import { useFormContext, useWatch } from "react-hook-form";
import { FieldError, inputClass, useFieldError } from "@/components/forms/fields";
import { PROMPT_VARIABLES, PROMPT_VARIABLE_NAMES, checkPromptTemplate } from "@/server/domain/context/schemas";
import type { StackFormValues } from "@/server/domain/stacks/schemas";
import { Section } from "./stack-sections";

// The prompt template with the variables it may use: clicking one inserts it at the cursor. The
// template is checked as you type with checkPromptTemplate, the check the save runs.

export function PromptSection({ disabled }: { disabled: boolean }) {
  const id = useId();
  const { register, setValue, getValues } = useFormContext<StackFormValues>();
  const template = useWatch<StackFormValues, "spec.promptTemplate">({ name: "spec.promptTemplate" }) ?? "";
  const error = useFieldError("spec.promptTemplate");
  const area = useRef<HTMLTextAreaElement | null>(null);
  const { ref, ...field } = register("spec.promptTemplate");
  const check = checkPromptTemplate(template);

  const insert = (name: string) => {
    const el = area.current;
    const value = getValues("spec.promptTemplate") ?? "";
    const at = el ? el.selectionStart : value.length;
    const end = el ? el.selectionEnd : value.length;
    const text = `{{${name}}}`;
    setValue("spec.promptTemplate", value.slice(0, at) + text + value.slice(end), { shouldDirty: true, shouldValidate: true });
    requestAnimationFrame(() => {
      el?.focus();
      el?.setSelectionRange(at + text.length, at + text.length);
    });
  };

  return (
    <Section title="Prompt template" description="{{variable}} placeholders are filled from the run's context bundle; ${{ }} is left as text.">
      <div className="grid gap-3 lg:grid-cols-[minmax(0,1fr)_16rem]">
        <div className="min-w-0">
          <label htmlFor={id} className="mb-1 block text-xs font-medium text-zinc-700 dark:text-zinc-300">
            Prompt template
          </label>
          <textarea
            id={id}
            rows={14}
            spellCheck={false}
            aria-invalid={error ? true : undefined}
            aria-describedby={`${id}-check${error ? ` ${id}-error` : ""}`}
            className={`${inputClass} font-mono text-xs leading-5`}
            ref={(el) => {
              ref(el);
              area.current = el;
            }}
            {...field}
          />
          <p id={`${id}-check`} className="mt-1 text-xs text-zinc-500" aria-live="polite">
            Uses {check.variables.length} variable{check.variables.length === 1 ? "" : "s"}
            {check.unknown.length > 0 && <span className="text-red-600"> · unknown: {check.unknown.map((n) => `{{${n}}}`).join(", ")}</span>}
            {check.malformed.length > 0 && <span className="text-red-600"> · {check.malformed.length} malformed</span>}
          </p>
          <FieldError id={`${id}-error`} message={error} />
        </div>
        <div className="min-w-0">
          <h3 className="mb-1 text-xs font-medium text-zinc-700 dark:text-zinc-300">Available variables</h3>
          <ul aria-label="Available variables" className="max-h-80 space-y-0.5 overflow-y-auto rounded-md border border-zinc-200 p-1 dark:border-zinc-800">
            {PROMPT_VARIABLE_NAMES.map((name) => (
              <li key={name}>
                <button
                  type="button"
                  disabled={disabled}
                  onClick={() => insert(name)}
                  title={PROMPT_VARIABLES[name].description}
                  aria-label={`Insert {{${name}}}: ${PROMPT_VARIABLES[name].description}`}
                  className="w-full rounded px-1.5 py-0.5 text-left hover:bg-zinc-100 disabled:cursor-not-allowed dark:hover:bg-zinc-800"
                >
                  <span className={`font-mono text-xs ${check.variables.includes(name) ? "font-semibold text-indigo-700 dark:text-indigo-400" : ""}`}>{name}</span>
                  <span className="block truncate text-[11px] text-zinc-500">{PROMPT_VARIABLES[name].description}</span>
                </button>
              </li>
            ))}
          </ul>
        </div>
      </div>
    </Section>
  );
}
