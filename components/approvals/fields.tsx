// The approval screen's definition-list field and list formatting, shared by its sections.

export function Field({ label, children }: { label: string; children: React.ReactNode }) {
  return (
    <div>
      <dt className="text-xs font-medium text-zinc-600 dark:text-zinc-400">{label}</dt>
      <dd className="text-sm break-words">{children}</dd>
    </div>
  );
}

export const list = (xs: readonly string[]) => (xs.length ? xs.join(", ") : "none");
