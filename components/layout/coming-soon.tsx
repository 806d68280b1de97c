// A page whose feature has not landed yet says what it will hold.
export function PlannedPage({ title, summary, items }: { title: string; summary: string; items: string[] }) {
  return (
    <div className="max-w-2xl space-y-3">
      <h1 className="text-xl font-semibold">{title}</h1>
      <p className="text-sm text-zinc-600 dark:text-zinc-400">{summary}</p>
      <div className="rounded-lg border border-dashed border-zinc-300 p-4 text-sm dark:border-zinc-700">
        <p className="mb-2 font-medium">This page will hold:</p>
        <ul className="list-disc space-y-1 pl-5 text-zinc-600 dark:text-zinc-400">
          {items.map((i) => <li key={i}>{i}</li>)}
        </ul>
      </div>
    </div>
  );
}
