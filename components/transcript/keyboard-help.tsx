"use client";

import { ShortcutsDialog, type ShortcutSection } from "@/components/layout/shortcuts-dialog";

export const transcriptShortcuts: ShortcutSection = {
  title: "Transcript",
  rows: [
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
  ],
};

/** The shortcuts dialog on a run page: the transcript's keys, then the console's. */
export function KeyboardHelp({ open, onClose }: { open: boolean; onClose: () => void }) {
  return <ShortcutsDialog open={open} onClose={onClose} sections={[transcriptShortcuts]} />;
}
