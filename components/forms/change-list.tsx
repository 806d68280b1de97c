import { cn } from "@/components/ui/cn";
import { EmptyState } from "@/components/ui/empty-state";
import { Table } from "@/components/ui/table";
import type { FieldChange } from "./server-errors";

// A structural change list (field, before, after) and a line diff: how stack versions, a
// conflicting save and an audit entry show what changed.

const tone = { added: "text-emerald-700 dark:text-emerald-400", removed: "text-red-700 dark:text-red-400", changed: "" } as const;

export function ChangeList({ changes, empty = "No differences." }: { changes: readonly FieldChange[]; empty?: string }) {
  if (changes.length === 0) return <EmptyState size="inline">{empty}</EmptyState>;
  return (
    <Table columns={["Field", "Before", "After"]} framed={false} density="dense">
      {changes.map((c, i) => (
        <tr key={`${c.path}-${i}`} className={tone[c.kind]}>
          <td className="font-mono">
            {c.path}
            {c.kind !== "changed" && <span className="ml-1 text-[10px] uppercase">{c.kind}</span>}
          </td>
          <td className="font-mono break-all whitespace-pre-wrap">{c.before ?? "—"}</td>
          <td className="font-mono break-all whitespace-pre-wrap">{c.after ?? "—"}</td>
        </tr>
      ))}
    </Table>
  );
}

export function LineDiffView({ lines, label }: { lines: readonly { op: "same" | "added" | "removed"; text: string }[]; label: string }) {
  return (
    <pre aria-label={label} tabIndex={0} className="max-h-72 overflow-auto rounded-md border border-zinc-200 bg-zinc-50 p-2 font-mono text-xs leading-5 dark:border-zinc-800 dark:bg-zinc-950">
      {lines.map((l, i) => (
        <div
          key={i}
          className={cn(l.op === "added" && "bg-emerald-100 dark:bg-emerald-950", l.op === "removed" && "bg-red-100 line-through decoration-red-400 dark:bg-red-950")}
        >
          <span aria-hidden className="mr-2 select-none text-zinc-500">
            {l.op === "added" ? "+" : l.op === "removed" ? "-" : " "}
          </span>
          {l.text || " "}
          {l.op !== "same" && <span className="sr-only">{l.op === "added" ? " (added)" : " (removed)"}</span>}
        </div>
      ))}
    </pre>
  );
}
