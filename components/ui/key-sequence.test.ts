import { describe, expect, it } from "vitest";
import { SEQUENCE_TIMEOUT_MS, idleSequence, isTypingTarget, stepSequence, type SequenceState } from "./key-sequence";

const bindings = new Map([
  ["g r", "/runs"],
  ["g a", "/approvals"],
  ["?", "help"],
]);

/** Feeds keys at the given times; returns what matched. */
function press(keys: [string, number][]) {
  let state: SequenceState = idleSequence;
  const matched: (string | null)[] = [];
  for (const [key, at] of keys) {
    const step = stepSequence(state, key, at, bindings);
    state = step.state;
    matched.push(step.match);
  }
  return matched;
}

describe("stepSequence", () => {
  it("matches a two-key sequence and a single key", () => {
    expect(press([["g", 0], ["a", 100]])).toEqual([null, "/approvals"]);
    expect(press([["?", 0]])).toEqual(["help"]);
  });

  it("holds the first key of a sequence as pending", () => {
    expect(stepSequence(idleSequence, "g", 0, bindings)).toEqual({ state: { prefix: "g", at: 0 }, match: null, pending: true });
  });

  it("drops a sequence whose second key comes after the timeout", () => {
    expect(press([["g", 0], ["r", SEQUENCE_TIMEOUT_MS]])).toEqual([null, "/runs"]);
    expect(press([["g", 0], ["r", SEQUENCE_TIMEOUT_MS + 1]])).toEqual([null, null]);
  });

  it("tries a second key that completes nothing as a new first key", () => {
    // "g x" is nothing; "x ?" is not a sequence, but "?" alone is.
    expect(press([["g", 0], ["?", 10]])).toEqual([null, "help"]);
    // "g g" is not bound: the second g starts a new sequence, which "r" completes.
    expect(press([["g", 0], ["g", 10], ["r", 20]])).toEqual([null, null, "/runs"]);
  });

  it("ignores keys that are bound to nothing", () => {
    expect(press([["r", 0], ["x", 10]])).toEqual([null, null]);
  });
});

describe("isTypingTarget", () => {
  const el = (tagName: string, extra: { isContentEditable?: boolean; inDialog?: boolean } = {}) => ({
    tagName,
    isContentEditable: extra.isContentEditable ?? false,
    closest: (selector: string) => (selector === "dialog[open]" && extra.inDialog ? {} : null),
  });

  it("treats text fields, selects and editable content as typing", () => {
    for (const tag of ["INPUT", "TEXTAREA", "SELECT"]) expect(isTypingTarget(el(tag))).toBe(true);
    expect(isTypingTarget(el("DIV", { isContentEditable: true }))).toBe(true);
  });

  it("treats an open dialog as its own, and the page as shortcuts' ground", () => {
    expect(isTypingTarget(el("BUTTON", { inDialog: true }))).toBe(true);
    expect(isTypingTarget(el("BODY"))).toBe(false);
    expect(isTypingTarget(null)).toBe(false);
  });
});
