"use client";

import { useId } from "react";
import { Button, type ButtonProps } from "./button";
import { cn } from "./cn";

type ActionButtonProps = Omit<ButtonProps, "disabled"> & {
  /** Why the action is unavailable; null or undefined when it is available. */
  disabledReason?: string | null;
  /** More on why, shown under the reason. */
  detail?: string | null;
};

/**
 * A button that, when unavailable, stays focusable and says why: the reason is
 * its accessible description and shows on hover and keyboard focus. (A plain
 * `disabled` button can be neither focused nor hovered, so its reason is lost.)
 */
export function ActionButton({ disabledReason, detail, onClick, className, children, ...props }: ActionButtonProps) {
  const id = useId();
  const disabled = Boolean(disabledReason);
  return (
    <span className="group relative inline-flex">
      <Button
        {...props}
        aria-disabled={disabled || undefined}
        aria-describedby={disabled ? id : undefined}
        className={cn(disabled && "cursor-not-allowed opacity-50", className)}
        onClick={(e) => {
          if (disabled) {
            e.preventDefault();
            return;
          }
          onClick?.(e);
        }}
      >
        {children}
      </Button>
      {disabled && (
        <span
          id={id}
          role="tooltip"
          className="pointer-events-none absolute bottom-full left-1/2 z-40 mb-1.5 hidden w-max max-w-64 -translate-x-1/2 rounded-md bg-zinc-900 px-2 py-1 text-xs text-white shadow-lg group-focus-within:block group-hover:block dark:bg-zinc-100 dark:text-zinc-900"
        >
          {disabledReason}
          {detail && <span className="mt-0.5 block opacity-80">{detail}</span>}
        </span>
      )}
    </span>
  );
}
