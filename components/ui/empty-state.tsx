import { cva, type VariantProps } from "class-variance-authority";
import { cn } from "./cn";

// What a list or pane says when it has nothing to show. `block` stands in for a table or list
// body; `inline` is a sentence inside a pane. The title is plain text, not a heading, so an empty
// list never adds a heading to the page's outline.

export const emptyStateVariants = cva("text-sm text-zinc-600 dark:text-zinc-400", {
  variants: { size: { block: "px-3 py-10 text-center", inline: "" } },
  defaultVariants: { size: "block" },
});

export type EmptyStateProps = React.HTMLAttributes<HTMLDivElement> &
  VariantProps<typeof emptyStateVariants> & { title?: React.ReactNode; action?: React.ReactNode };

export function EmptyState({ title, action, size, className, children, ...props }: EmptyStateProps) {
  if (!title && !action) {
    return (
      <p className={cn(emptyStateVariants({ size }), className)} {...props}>
        {children}
      </p>
    );
  }
  return (
    <div className={cn(emptyStateVariants({ size }), "space-y-2", className)} {...props}>
      {title && <p className="font-medium text-zinc-800 dark:text-zinc-200">{title}</p>}
      {children && <p>{children}</p>}
      {action && <div className={cn(size !== "inline" && "flex justify-center")}>{action}</div>}
    </div>
  );
}
