"use client";

import { useSyncExternalStore } from "react";

// False in server HTML and during hydration, true once React owns the page. Controls whose
// handlers matter (a form that reads React state) stay disabled until then: a click or a pick
// made on the server HTML would otherwise be lost or reset by hydration.

const noSubscription = () => () => {};

export function useHydrated(): boolean {
  return useSyncExternalStore(noSubscription, () => true, () => false);
}
