"use client";

import { useEffect, useRef } from "react";
import { hasCommandModifier, isTypingTarget } from "@/components/ui/key-sequence";

// Transcript shortcuts (see keyboard-help.tsx). Ignored while typing in a field
// or with a modifier held, so they never steal a browser or OS shortcut. They listen
// on document, before the console's own (g r, g a…, on window): a key taken here is
// marked handled, and a first `g` is left unmarked so `g a` still leaves the page.

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

export function useTranscriptKeys(actions: TranscriptKeyActions) {
  const ref = useRef(actions);
  useEffect(() => {
    ref.current = actions;
  });
  useEffect(() => {
    let lastG = 0;
    const onKey = (e: KeyboardEvent) => {
      if (hasCommandModifier(e) || isTypingTarget(e.target)) return;
      const a = ref.current;
      // The key after a lone `g` belongs to a console sequence (g n, g a…), not to the transcript.
      if (e.key !== "g" && lastG !== 0 && Date.now() - lastG < 1_000) {
        lastG = 0;
        return;
      }
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
              return true;
            }
            lastG = now;
            return false;
          }
          default:
            return false;
        }
      })();
      if (handled) e.preventDefault();
    };
    document.addEventListener("keydown", onKey);
    return () => document.removeEventListener("keydown", onKey);
  }, []);
}
