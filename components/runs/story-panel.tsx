"use client";

import { useQuery } from "@tanstack/react-query";
import Link from "next/link";
import { useSyncExternalStore } from "react";
import { useTRPC } from "@/components/providers/trpc";
import { Button } from "@/components/ui/button";
import { Card } from "@/components/ui/card";

// The first-run story: one line per scene the demo can show, each with links to the objects
// that show it (server/domain/demo/story.ts finds them; a scene with nothing behind it says so).
// Dismissed per browser; "Show the demo story" brings it back.

const KEY = "airlock.story-panel.dismissed";
const listeners = new Set<() => void>();
const subscribe = (l: () => void) => {
  listeners.add(l);
  return () => listeners.delete(l);
};
const dismissed = () => window.localStorage.getItem(KEY) === "1";
function setDismissed(value: boolean) {
  if (value) window.localStorage.setItem(KEY, "1");
  else window.localStorage.removeItem(KEY);
  for (const l of listeners) l();
}

export function StoryPanel() {
  const trpc = useTRPC();
  // Hidden in server HTML (the choice lives in the browser), so a dismissed panel never flashes.
  const hidden = useSyncExternalStore(subscribe, dismissed, () => true);
  const story = useQuery({ ...trpc.demo.story.queryOptions(), enabled: !hidden });
  const hydrated = useSyncExternalStore(subscribe, () => true, () => false);
  if (!hydrated) return null;
  if (hidden) {
    return (
      <div className="flex justify-end">
        <Button variant="ghost" size="sm" onClick={() => setDismissed(false)}>
          Show the demo story
        </Button>
      </div>
    );
  }
  const scenes = story.data?.scenes ?? [];
  return (
    <Card as="section" tone="info" aria-label="The demo story" className="space-y-3">
      <div className="flex items-start justify-between gap-4">
        <div>
          <h2 className="text-sm font-semibold">New here? The demo in seven scenes</h2>
          <p className="text-xs text-zinc-600 dark:text-zinc-400">
            Each scene is real records of this console: follow the links, approve or reject as a maintainer would.
          </p>
        </div>
        <Button variant="ghost" size="sm" onClick={() => setDismissed(true)}>
          Dismiss
        </Button>
      </div>
      {story.isPending ? <p className="text-xs text-zinc-600 dark:text-zinc-400">Loading the story…</p> : null}
      <ol className="grid gap-3 md:grid-cols-2 xl:grid-cols-3">
        {scenes.map((s, i) => (
          <li key={s.key} data-scene={s.key} className="space-y-1 text-sm">
            <div className="font-medium">
              {i + 1}. {s.title}
            </div>
            <p className="text-xs text-zinc-700 dark:text-zinc-300">{s.summary}</p>
            {s.how ? <p className="text-xs text-zinc-600 dark:text-zinc-400">By: {s.how}</p> : null}
            {s.links.length > 0 ? (
              <ul className="flex flex-wrap gap-x-3 gap-y-1 text-xs">
                {s.links.map((l) => (
                  <li key={l.href + l.label}>
                    <Link className="text-sky-700 underline-offset-2 hover:underline dark:text-sky-400" href={l.href}>
                      {l.label}
                    </Link>
                  </li>
                ))}
              </ul>
            ) : null}
          </li>
        ))}
      </ol>
    </Card>
  );
}
