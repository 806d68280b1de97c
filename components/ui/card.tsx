import { cva, type VariantProps } from "class-variance-authority";
import { cn } from "./cn";

// The console's one surface: a bordered panel. Sections, tables, stats and forms sit on it.

export const cardVariants = cva("rounded-lg border", {
  variants: {
    tone: {
      default: "border-zinc-200 bg-white dark:border-zinc-800 dark:bg-zinc-900",
      info: "border-sky-200 bg-sky-50/60 dark:border-sky-900 dark:bg-sky-950/30",
      dashed: "border-dashed border-zinc-300 dark:border-zinc-700",
    },
    padding: { none: "", sm: "p-3", md: "p-4" },
  },
  defaultVariants: { tone: "default", padding: "md" },
});

type CardElement = "div" | "section" | "article" | "aside" | "nav" | "ul" | "ol" | "dl" | "form";

export type CardProps = React.HTMLAttributes<HTMLElement> & VariantProps<typeof cardVariants> & { as?: CardElement };

export function Card({ as: Element = "div", tone, padding, className, ...props }: CardProps) {
  return <Element className={cn(cardVariants({ tone, padding }), className)} {...props} />;
}
