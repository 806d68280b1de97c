import { Card } from "@/components/ui/card";
import { EmptyState } from "@/components/ui/empty-state";

// Layout pieces shared by the run page's panes.

export function Section({ title, children, className, id }: { title: string; children: React.ReactNode; className?: string; id?: string }) {
  const headingId = `${id ?? title.toLowerCase().replace(/[^a-z0-9]+/g, "-")}-heading`;
  return (
    <Card as="section" padding="sm" aria-labelledby={headingId} className={className}>
      <h2 id={headingId} className="mb-2 text-xs font-semibold tracking-wide text-zinc-600 uppercase dark:text-zinc-400">
        {title}
      </h2>
      {children}
    </Card>
  );
}

export function Field({ label, children }: { label: string; children: React.ReactNode }) {
  return (
    <div className="flex min-w-0 gap-2 text-sm">
      <dt className="w-28 shrink-0 text-zinc-600 dark:text-zinc-400">{label}</dt>
      <dd className="min-w-0 break-words">{children}</dd>
    </div>
  );
}

export function Empty({ children }: { children: React.ReactNode }) {
  return <EmptyState size="inline">{children}</EmptyState>;
}

export function Names({ names, empty = "none" }: { names: readonly string[]; empty?: string }) {
  if (names.length === 0) return <span className="text-zinc-600 dark:text-zinc-400">{empty}</span>;
  return (
    <span className="flex flex-wrap gap-1">
      {names.map((n) => (
        <code key={n} className="rounded bg-zinc-100 px-1 text-xs dark:bg-zinc-800">
          {n}
        </code>
      ))}
    </span>
  );
}

export function ExternalLink({ href, children }: { href: string; children: React.ReactNode }) {
  if (!href) return <>{children}</>;
  return (
    <a href={href} target="_blank" rel="noopener noreferrer" className="text-indigo-600 underline-offset-2 hover:underline dark:text-indigo-400">
      {children}
    </a>
  );
}
