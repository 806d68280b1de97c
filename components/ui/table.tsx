import { cva, type VariantProps } from "class-variance-authority";
import { cardVariants } from "./card";
import { cn } from "./cn";

// Every table in the console: its columns are declared once, the header, cell padding and the
// empty row come from here, so lists look alike. A framed table sits on a card and scrolls
// sideways on a narrow screen; an unframed, dense one sits inside a panel.

export const tableVariants = cva("w-full text-left", {
  variants: {
    density: {
      normal: "text-sm [&_td]:px-3 [&_td]:py-2 [&_th]:px-3 [&_th]:py-2",
      compact: "text-sm [&_td]:px-3 [&_td]:py-1.5 [&_th]:px-3 [&_th]:py-1.5",
      dense: "text-xs [&_td]:py-1 [&_td]:pr-3 [&_td]:align-top [&_th]:py-1 [&_th]:pr-3",
    },
  },
  defaultVariants: { density: "normal" },
});

export type Column = string | { label: React.ReactNode; className?: string; srOnly?: boolean };

export type TableProps = Omit<React.TableHTMLAttributes<HTMLTableElement>, "children"> &
  VariantProps<typeof tableVariants> & {
    columns: readonly Column[];
    /** Rows (<tr>) of the body. */
    children?: React.ReactNode;
    /** Shown across the columns instead of the rows when set (the list is empty). */
    empty?: React.ReactNode;
    framed?: boolean;
    bodyTestId?: string;
    wrapperClassName?: string;
  };

export function Table({ columns, children, empty, framed = true, density, bodyTestId, className, wrapperClassName, ...props }: TableProps) {
  const table = (
    <table className={cn(tableVariants({ density }), className)} {...props}>
      <thead
        className={cn(
          "text-xs text-zinc-600 dark:text-zinc-400",
          framed && "border-b border-zinc-200 bg-zinc-50 uppercase dark:border-zinc-800 dark:bg-zinc-900/60",
        )}
      >
        <tr>
          {columns.map((c, i) => {
            const col = typeof c === "string" ? { label: c } : c;
            return (
              <th key={i} scope="col" className={cn("font-medium", col.className)}>
                {col.srOnly ? <span className="sr-only">{col.label}</span> : col.label}
              </th>
            );
          })}
        </tr>
      </thead>
      <tbody data-testid={bodyTestId} className="divide-y divide-zinc-100 dark:divide-zinc-800">
        {empty ? (
          <tr>
            <td colSpan={columns.length} className="text-center text-sm text-zinc-600 dark:text-zinc-400 py-10!">
              {empty}
            </td>
          </tr>
        ) : (
          children
        )}
      </tbody>
    </table>
  );
  if (!framed) return <div className={cn("overflow-x-auto", wrapperClassName)}>{table}</div>;
  return <div className={cn(cardVariants({ padding: "none" }), "overflow-x-auto", wrapperClassName)}>{table}</div>;
}

export const tableRowVariants = cva("", {
  variants: { interactive: { true: "hover:bg-zinc-50 dark:hover:bg-zinc-800/50", false: "" } },
  defaultVariants: { interactive: false },
});

export function TableRow({ interactive, className, ...props }: React.HTMLAttributes<HTMLTableRowElement> & VariantProps<typeof tableRowVariants>) {
  return <tr className={cn(tableRowVariants({ interactive }), className)} {...props} />;
}
