"use client";

import { useSyncExternalStore } from "react";
import { Toaster } from "sonner";
import { THEME_STORAGE_KEY, themeChoices, type ThemeChoice } from "./theme-script";

// The chosen theme as a store over localStorage and the OS's scheme: a choice made here, in
// another tab (the storage event) or by the OS (for "system") is applied to the page and read by
// every subscriber, the toasts included.

const media = () => window.matchMedia("(prefers-color-scheme: dark)");
const listeners = new Set<() => void>();

function readChoice(): ThemeChoice {
  try {
    const v = localStorage.getItem(THEME_STORAGE_KEY);
    return (themeChoices as readonly string[]).includes(v ?? "") ? (v as ThemeChoice) : "system";
  } catch {
    return "system";
  }
}

/** The scheme a choice shows right now. */
export const resolveTheme = (choice: ThemeChoice, osDark: boolean): "light" | "dark" => (choice === "system" ? (osDark ? "dark" : "light") : choice);

function apply() {
  const choice = readChoice();
  const dark = resolveTheme(choice, media().matches) === "dark";
  const root = document.documentElement;
  root.classList.toggle("dark", dark);
  root.dataset.theme = choice;
  root.style.colorScheme = dark ? "dark" : "light";
  listeners.forEach((l) => l());
}

function subscribe(listener: () => void) {
  if (listeners.size === 0) {
    media().addEventListener("change", apply);
    window.addEventListener("storage", onStorage);
  }
  listeners.add(listener);
  return () => {
    listeners.delete(listener);
    if (listeners.size === 0) {
      media().removeEventListener("change", apply);
      window.removeEventListener("storage", onStorage);
    }
  };
}

function onStorage(e: StorageEvent) {
  if (e.key === THEME_STORAGE_KEY) apply();
}

export function setTheme(choice: ThemeChoice) {
  try {
    if (choice === "system") localStorage.removeItem(THEME_STORAGE_KEY);
    else localStorage.setItem(THEME_STORAGE_KEY, choice);
  } catch {
    // Storage refused (private mode): the choice lasts this page.
  }
  apply();
}

// Strings, so successive reads compare equal; the server (and hydration) knows neither.
const snapshot = () => `${readChoice()} ${resolveTheme(readChoice(), media().matches)}`;
const serverSnapshot = () => null;

export function useTheme(): { choice: ThemeChoice; resolved: "light" | "dark" } | null {
  const s = useSyncExternalStore(subscribe, snapshot, serverSnapshot);
  if (s === null) return null;
  const [choice, resolved] = s.split(" ") as [ThemeChoice, "light" | "dark"];
  return { choice, resolved };
}

/** The app's toasts, in the page's theme. */
export function ThemedToaster() {
  const theme = useTheme();
  return <Toaster theme={theme?.resolved ?? "system"} richColors closeButton position="bottom-right" />;
}
