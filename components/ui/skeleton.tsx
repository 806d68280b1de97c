import { cardVariants } from "./card";
import { cn } from "./cn";

// Grey shapes where content is coming. The region is announced once ("Loading runs"); the
// shapes themselves are hidden from assistive technology.

export function Skeleton({ className, ...props }: React.HTMLAttributes<HTMLDivElement>) {
  return <div aria-hidden="true" className={cn("animate-pulse rounded-md bg-zinc-200 dark:bg-zinc-800", className)} {...props} />;
}

/** A region that is loading: `label` says what, to screen readers only. */
export function LoadingRegion({ label, className, children }: { label: string; className?: string; children: React.ReactNode }) {
  return (
    <div role="status" aria-busy="true" className={className}>
      <span className="sr-only">{label}</span>
      {children}
    </div>
  );
}

export function SkeletonLines({ lines = 3, className }: { lines?: number; className?: string }) {
  return (
    <div className={cn("space-y-2", className)}>
      {Array.from({ length: lines }, (_, i) => (
        <Skeleton key={i} className={cn("h-3.5", i === lines - 1 ? "w-2/3" : "w-full")} />
      ))}
    </div>
  );
}

/** A label over its value: a stat, a header field. */
export function SkeletonField({ size = "sm", className }: { size?: "sm" | "lg"; className?: string }) {
  return (
    <div className={cn("space-y-1.5", className)}>
      <Skeleton className="h-2.5 w-16" />
      <Skeleton className={size === "lg" ? "h-7 w-20" : "h-3.5 w-24"} />
    </div>
  );
}

/** Rows of a table that is loading, on the same card as the real one. */
export function SkeletonTable({ rows = 8, columns = 5, className }: { rows?: number; columns?: number; className?: string }) {
  return (
    <div className={cn(cardVariants({ padding: "none" }), "overflow-hidden", className)}>
      <div className="flex gap-4 border-b border-zinc-200 bg-zinc-50 px-3 py-2.5 dark:border-zinc-800 dark:bg-zinc-900/60">
        {Array.from({ length: columns }, (_, i) => (
          <Skeleton key={i} className="h-3 flex-1" />
        ))}
      </div>
      <div className="divide-y divide-zinc-100 dark:divide-zinc-800">
        {Array.from({ length: rows }, (_, r) => (
          <div key={r} className="flex gap-4 px-3 py-3">
            {Array.from({ length: columns }, (_, c) => (
              <Skeleton key={c} className={cn("h-3.5 flex-1", c === 0 && "flex-[2]")} />
            ))}
          </div>
        ))}
      </div>
    </div>
  );
}
