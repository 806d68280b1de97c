"use client";

import { useRouter } from "next/navigation";
import { useEffect, useRef } from "react";
import { hasCommandModifier, idleSequence, isTypingTarget, stepSequence, type SequenceState } from "@/components/ui/key-sequence";
import { consoleNav, otherShortcutPages } from "./nav";

// `g r`, `g a`… go to a page; `?` opens the shortcuts. Listens on window, after a page's own
// handlers (the transcript listens on document): a key a page took (preventDefault) is not ours.

type Action = { href: string } | { help: true };

const bindings = new Map<string, Action>([
  ...[...consoleNav, ...otherShortcutPages].map((p): [string, Action] => [`g ${p.key}`, { href: p.href }]),
  ["?", { help: true }],
]);

export function useGlobalShortcuts(onHelp: () => void) {
  const router = useRouter();
  const help = useRef(onHelp);
  useEffect(() => {
    help.current = onHelp;
  });
  useEffect(() => {
    let state: SequenceState = idleSequence;
    const onKey = (e: KeyboardEvent) => {
      if (e.defaultPrevented || hasCommandModifier(e) || isTypingTarget(e.target)) {
        state = idleSequence;
        return;
      }
      const step = stepSequence(state, e.key, e.timeStamp, bindings);
      state = step.state;
      if (!step.match) return;
      e.preventDefault();
      if ("href" in step.match) router.push(step.match.href);
      else help.current();
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, [router]);
}
