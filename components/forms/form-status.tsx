"use client";

import { Alert } from "@/components/ui/alert";
import { Button } from "@/components/ui/button";
import { RelativeTime } from "@/components/ui/time";
import { ChangeList, LineDiffView } from "./change-list";
import type { Conflict } from "./server-errors";

// The banners a configuration form shows: why it is read-only, what the server refused that no
// field could show, and a conflicting save with the other person's change.

export function ReadOnlyNote({ id, reason }: { id?: string; reason: string }) {
  return (
    <Alert id={id} role="note" tone="neutral" variant="banner">
      Read-only: {reason}
    </Alert>
  );
}

export function RefusalBanner({ messages }: { messages: readonly string[] }) {
  if (messages.length === 0) return null;
  return (
    <Alert as="div" variant="banner">
      <p className="font-medium">Not saved:</p>
      <ul className="mt-1 list-disc pl-5">
        {messages.map((m) => (
          <li key={m}>{m}</li>
        ))}
      </ul>
    </Alert>
  );
}

export function ConflictPanel({ conflict, onLoadTheirs, onKeepMine }: { conflict: Conflict; onLoadTheirs: () => void; onKeepMine: () => void }) {
  return (
    <Alert as="section" role="alert" tone="warning" variant="banner" aria-label="Conflicting change" className="space-y-2 p-3">
      <p className="font-medium">{conflict.message}</p>
      <p className="text-xs">
        Their change (v{conflict.expectedVersion} → v{conflict.currentVersion}
        {conflict.savedBy ? `, by ${conflict.savedBy}` : ""}
        {conflict.savedAt && (
          <>
            , <RelativeTime date={conflict.savedAt} />
          </>
        )}
        ):
      </p>
      <div className="rounded border border-amber-200 bg-white p-2 dark:border-amber-900 dark:bg-zinc-900">
        <ChangeList changes={conflict.changes} empty="Their change is not recorded field by field; compare the versions below." />
        {conflict.lines && <LineDiffView lines={conflict.lines} label="Their prompt template change" />}
      </div>
      <p className="text-xs">Your edits are still in the form. Load their version (your edits are discarded), or keep your edits and save them over v{conflict.currentVersion}.</p>
      <div className="flex flex-wrap gap-2">
        <Button type="button" size="sm" onClick={onLoadTheirs}>
          Load v{conflict.currentVersion} (discard mine)
        </Button>
        <Button type="button" size="sm" variant="primary" onClick={onKeepMine}>
          Keep my edits on top of v{conflict.currentVersion}
        </Button>
      </div>
    </Alert>
  );
}
