import { cva, type VariantProps } from "class-variance-authority";
import { cn } from "./cn";

// What went wrong, or what to know, in words. `inline` is a line of coloured text (a failed
// query, a refused field); `banner` is a boxed message (a refusal, a conflict, a read-only note).
// A danger alert is announced (role="alert") unless the caller names another role.

export const alertVariants = cva("text-sm", {
  variants: {
    tone: { danger: "", warning: "", info: "", neutral: "" },
    variant: { inline: "", banner: "rounded-md border p-2" },
  },
  compoundVariants: [
    { variant: "inline", tone: "danger", className: "text-red-700 dark:text-red-400" },
    { variant: "inline", tone: "warning", className: "text-amber-800 dark:text-amber-300" },
    { variant: "inline", tone: "info", className: "text-sky-800 dark:text-sky-300" },
    { variant: "inline", tone: "neutral", className: "text-zinc-600 dark:text-zinc-400" },
    { variant: "banner", tone: "danger", className: "border-red-200 bg-red-50 text-red-800 dark:border-red-900 dark:bg-red-950 dark:text-red-300" },
    { variant: "banner", tone: "warning", className: "border-amber-300 bg-amber-50 text-amber-900 dark:border-amber-800 dark:bg-amber-950 dark:text-amber-200" },
    { variant: "banner", tone: "info", className: "border-sky-200 bg-sky-50 text-sky-900 dark:border-sky-900 dark:bg-sky-950 dark:text-sky-200" },
    { variant: "banner", tone: "neutral", className: "border-zinc-200 bg-zinc-50 text-zinc-600 dark:border-zinc-800 dark:bg-zinc-900 dark:text-zinc-400" },
  ],
  defaultVariants: { tone: "danger", variant: "inline" },
});

export type AlertProps = React.HTMLAttributes<HTMLElement> & VariantProps<typeof alertVariants> & { as?: "p" | "div" | "section" };

export function Alert({ as: Element = "p", tone, variant, role, className, ...props }: AlertProps) {
  const announced = role ?? ((tone ?? "danger") === "danger" ? "alert" : undefined);
  return <Element role={announced} className={cn(alertVariants({ tone, variant }), className)} {...props} />;
}
