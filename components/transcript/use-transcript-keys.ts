"use client";

import { useEffect, useRef } from "react";

// Transcript shortcuts (see keyboard-help.tsx). Ignored while typing in a field
// or with a modifier held, so they never steal a browser or OS shortcut.

export type TranscriptKeyActions = {
  next: () => void;
  previous: () => void;
  focusSearch: () => void;
  top: () => void;
  bottom: () => void;
  help: () => void;
  nextMatch: () => void;
  previousMatch: () => void;
};

function isTyping(target: EventTarget | null) {
  if (!(target instanceof HTMLElement)) return false;
  return target.isContentEditable || ["INPUT", "TEXTAREA", "SELECT"].includes(target.tagName) || target.closest("dialog[open]") !== null;
}

export function useTranscriptKeys(actions: TranscriptKeyActions) {
  const ref = useRef(actions);
  useEffect(() => {
    ref.current = actions;
  });
  useEffect(() => {
    let lastG = 0;
    const onKey = (e: KeyboardEvent) => {
      if (e.ctrlKey || e.metaKey || e.altKey || isTyping(e.target)) return;
      const a = ref.current;
      const handled = (() => {
        switch (e.key) {
          case "j":
            a.next();
            return true;
          case "k":
            a.previous();
            return true;
          case "/":
            a.focusSearch();
            return true;
          case "?":
            a.help();
            return true;
          case "n":
            a.nextMatch();
            return true;
          case "N":
            a.previousMatch();
            return true;
          case "G":
            a.bottom();
            return true;
          case "g": {
            const now = Date.now();
            if (now - lastG < 1_000) {
              lastG = 0;
              a.top();
            } else lastG = now;
            return true;
          }
          default:
            return false;
        }
      })();
      if (handled) e.preventDefault();
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, []);
}
