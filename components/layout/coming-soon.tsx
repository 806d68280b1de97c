import { Card } from "@/components/ui/card";

// A page whose feature has not landed yet says what it will hold.
export function PlannedPage({ title, summary, items }: { title: string; summary: string; items: string[] }) {
  return (
    <div className="max-w-2xl space-y-3">
      <h1 className="text-xl font-semibold">{title}</h1>
      <p className="text-sm text-zinc-600 dark:text-zinc-400">{summary}</p>
      <Card tone="dashed" className="text-sm">
        <p className="mb-2 font-medium">This page will hold:</p>
        <ul className="list-disc space-y-1 pl-5 text-zinc-600 dark:text-zinc-400">
          {items.map((i) => <li key={i}>{i}</li>)}
        </ul>
      </Card>
    </div>
  );
}
