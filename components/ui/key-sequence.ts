// Keyboard shortcuts as key sequences ("g r", "?"): a pure matcher over keydown keys, and the
// rule that shortcuts never fire while someone is typing.

export type SequenceState = { prefix: string | null; at: number };

export const idleSequence: SequenceState = { prefix: null, at: 0 };

/** How long the second key of a sequence may wait after the first. */
export const SEQUENCE_TIMEOUT_MS = 1_500;

export type SequenceStep<T> = { state: SequenceState; match: T | null; pending: boolean };

/**
 * Feeds one key to the matcher. `bindings` maps sequences ("g r") and single keys ("?") to what
 * they do. A first key that starts a sequence is held (`pending`) until the next key or the
 * timeout; a second key that completes nothing is tried again as a first key.
 */
export function stepSequence<T>(state: SequenceState, key: string, now: number, bindings: ReadonlyMap<string, T>): SequenceStep<T> {
  if (state.prefix !== null && now - state.at <= SEQUENCE_TIMEOUT_MS) {
    const match = bindings.get(`${state.prefix} ${key}`);
    if (match !== undefined) return { state: idleSequence, match, pending: false };
  }
  if ([...bindings.keys()].some((k) => k.startsWith(`${key} `))) return { state: { prefix: key, at: now }, match: null, pending: true };
  return { state: idleSequence, match: bindings.get(key) ?? null, pending: false };
}

export type KeyTarget = { tagName?: string; isContentEditable?: boolean; closest?: (selector: string) => unknown };

/** A field that takes text (or a control in an open dialog): keys there are the user's, not shortcuts. */
export function isTypingTarget(target: EventTarget | KeyTarget | null): boolean {
  const t = target as KeyTarget | null;
  if (!t || typeof t.tagName !== "string") return false;
  if (t.isContentEditable || ["INPUT", "TEXTAREA", "SELECT"].includes(t.tagName)) return true;
  return typeof t.closest === "function" && t.closest("dialog[open]") !== null;
}

/** Keys held with Ctrl, Meta or Alt belong to the browser and the OS. */
export const hasCommandModifier = (e: { ctrlKey: boolean; metaKey: boolean; altKey: boolean }) => e.ctrlKey || e.metaKey || e.altKey;
