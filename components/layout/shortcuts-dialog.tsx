"use client";

import { Button } from "@/components/ui/button";
import { Dialog } from "@/components/ui/dialog";
import { Kbd } from "@/components/ui/kbd";
import { consoleNav, otherShortcutPages } from "./nav";

// The one "Keyboard shortcuts" dialog: the page's own shortcuts (the transcript's) first, then
// those that work everywhere.

export type ShortcutRow = [keys: string[], what: string];
export type ShortcutSection = { title: string; rows: readonly ShortcutRow[] };

export const globalShortcuts: ShortcutSection = {
  title: "Everywhere",
  rows: [
    ...[...consoleNav, ...otherShortcutPages].map((p): ShortcutRow => [["g", p.key], `Go to ${p.label.toLowerCase()}`]),
    [["?"], "These shortcuts"],
  ],
};

export function ShortcutsDialog({ open, onClose, sections = [] }: { open: boolean; onClose: () => void; sections?: readonly ShortcutSection[] }) {
  return (
    <Dialog open={open} onClose={onClose} title="Keyboard shortcuts">
      <div className="space-y-4">
        {[...sections, globalShortcuts].map((section) => (
          <section key={section.title} aria-label={section.title}>
            <h3 className="mb-1.5 text-xs font-semibold tracking-wide text-zinc-600 uppercase dark:text-zinc-400">{section.title}</h3>
            <dl className="grid grid-cols-[auto_1fr] gap-x-4 gap-y-1.5 text-sm">
              {section.rows.map(([keys, what]) => (
                <div key={what} className="contents">
                  <dt className="flex items-center gap-1">
                    {keys.map((k, i) => (
                      <Kbd key={i}>{k}</Kbd>
                    ))}
                  </dt>
                  <dd>{what}</dd>
                </div>
              ))}
            </dl>
          </section>
        ))}
        <p className="text-xs text-zinc-600 dark:text-zinc-400">Shortcuts do nothing while you type in a field.</p>
      </div>
      <div className="mt-4 flex justify-end">
        <Button type="button" size="sm" onClick={onClose}>
          Close
        </Button>
      </div>
    </Dialog>
  );
}
