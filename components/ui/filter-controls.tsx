"use client";

import { useEffect, useRef, useState } from "react";
import { cn } from "./cn";

// The controls of a list's filter bar. A select changes the filter at once; a text box changes
// it a moment after typing stops, so the URL and the query follow words, not keystrokes.

export const filterControlClass = "h-8 rounded-md border border-zinc-300 bg-white px-2 text-sm dark:border-zinc-700 dark:bg-zinc-900";

export type FilterOption<V extends string> = { value: V; label: string };

export function FilterSelect<V extends string>(props: {
  label: string;
  value: V | null;
  onChange: (value: V | null) => void;
  options: readonly FilterOption<V>[];
  /** The first option, which clears the filter ("All repositories"). */
  allLabel: string;
  className?: string;
}) {
  return (
    <select
      aria-label={props.label}
      className={cn(filterControlClass, props.className)}
      value={props.value ?? ""}
      onChange={(e) => props.onChange((e.target.value || null) as V | null)}
    >
      <option value="">{props.allLabel}</option>
      {props.options.map((o) => (
        <option key={o.value} value={o.value}>
          {o.label}
        </option>
      ))}
    </select>
  );
}

type FilterInputProps = Omit<React.InputHTMLAttributes<HTMLInputElement>, "value" | "onChange"> & {
  value: string | null;
  onCommit: (value: string | null) => void;
  delay?: number;
};

export function FilterInput({ value, onCommit, delay = 300, className, ...props }: FilterInputProps) {
  const [text, setText] = useState(value ?? "");
  // The URL changed from elsewhere (back, a link): show its value, unless it is what we typed.
  const [shown, setShown] = useState(value);
  if (value !== shown) {
    setShown(value);
    if ((value ?? "") !== text.trim()) setText(value ?? "");
  }
  const commit = useRef(onCommit);
  useEffect(() => {
    commit.current = onCommit;
  });
  useEffect(() => {
    const next = text.trim() || null;
    if (next === value) return;
    const t = setTimeout(() => commit.current(next), delay);
    return () => clearTimeout(t);
  }, [text, value, delay]);
  return <input {...props} value={text} onChange={(e) => setText(e.target.value)} className={cn(filterControlClass, className)} />;
}
