"use client";

import { useSyncExternalStore } from "react";

// The current time to the second, for live durations. The server snapshot is
// null, so server HTML never disagrees with the first client render; one timer
// serves every component that asks.

const listeners = new Set<() => void>();
let timer: ReturnType<typeof setInterval> | null = null;

function subscribe(listener: () => void) {
  listeners.add(listener);
  timer ??= setInterval(() => listeners.forEach((l) => l()), 1_000);
  return () => {
    listeners.delete(listener);
    if (listeners.size === 0 && timer) {
      clearInterval(timer);
      timer = null;
    }
  };
}

// A number (not a Date) so successive reads within a second compare equal.
const second = () => Math.floor(Date.now() / 1_000) * 1_000;

export function useNow(): number | null {
  return useSyncExternalStore(subscribe, second, () => null);
}
