"use client";

import { Dialog } from "@/components/ui/dialog";
import { Kbd } from "@/components/ui/kbd";

export const transcriptShortcuts: [keys: string[], what: string][] = [
  [["j"], "Next event"],
  [["k"], "Previous event"],
  [["/"], "Search the transcript"],
  [["Enter"], "Next match (in the search box)"],
  [["Shift", "Enter"], "Previous match (in the search box)"],
  [["n"], "Next match"],
  [["N"], "Previous match"],
  [["g", "g"], "First event"],
  [["G"], "Latest event (and follow new ones)"],
  [["?"], "This help"],
];

export function KeyboardHelp({ open, onClose }: { open: boolean; onClose: () => void }) {
  return (
    <Dialog open={open} onClose={onClose} title="Keyboard shortcuts">
      <dl className="grid grid-cols-[auto_1fr] gap-x-4 gap-y-1.5 text-sm">
        {transcriptShortcuts.map(([keys, what]) => (
          <div key={what} className="contents">
            <dt className="flex gap-1">
              {keys.map((k, i) => (
                <Kbd key={i}>{k}</Kbd>
              ))}
            </dt>
            <dd>{what}</dd>
          </div>
        ))}
      </dl>
      <div className="mt-4 flex justify-end">
        <button type="button" onClick={onClose} className="rounded-md border border-zinc-300 px-3 py-1 text-sm dark:border-zinc-700">
          Close
        </button>
      </div>
    </Dialog>
  );
}
