import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { canonicalJson } from "@/server/lib/canonical-json";
import { digestOf, sha256 } from "./digest";

describe("canonicalJson", () => {
  it("sorts keys at every depth and drops whitespace", () => {
    expect(canonicalJson({ b: 1, a: { d: [3, { z: true, y: null }], c: "x" } })).toBe(
      '{"a":{"c":"x","d":[3,{"y":null,"z":true}]},"b":1}',
    );
  });

  it("sorts by UTF-16 code units", () => {
    expect(canonicalJson({ "é": 1, z: 2, A: 3, "😀": 4, "\uFFFF": 5 })).toBe('{"A":3,"z":2,"é":1,"😀":4,"\uFFFF":5}');
  });

  it("keeps array order and writes undefined array items as null", () => {
    expect(canonicalJson([3, 1, undefined, 2])).toBe("[3,1,null,2]");
  });

  it("drops undefined members", () => {
    expect(canonicalJson({ a: undefined, b: 1 })).toBe('{"b":1}');
  });

  it.each([
    [Number.NaN, "NaN"],
    [Number.POSITIVE_INFINITY, "Infinity"],
    [10n, "bigint"],
    [() => 1, "function"],
    [new Map(), "Map"],
    [new Date(0), "Date"],
  ])("refuses %s", (value, what) => {
    expect(() => canonicalJson({ v: value })).toThrow(what);
  });

  it("refuses cycles but allows shared references", () => {
    const shared = { x: 1 };
    expect(canonicalJson({ a: shared, b: shared })).toBe('{"a":{"x":1},"b":{"x":1}}');
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(() => canonicalJson(cyclic)).toThrow("cycle");
  });

  it("parses back to the same value, and is independent of key order (property)", () => {
    fc.assert(
      fc.property(fc.jsonValue(), (v) => {
        const text = canonicalJson(v);
        const reparsed = JSON.parse(text) as unknown;
        return canonicalJson(reparsed) === text && canonicalJson(shuffleKeys(reparsed)) === text;
      }),
      { numRuns: 300 },
    );
  });

  it("digests are sha256 hex of the canonical text", () => {
    expect(sha256("")).toBe("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    expect(digestOf({ b: 1, a: 2 })).toBe(digestOf({ a: 2, b: 1 }));
    expect(digestOf({ a: 2, b: 1 })).toBe(`sha256:${sha256('{"a":2,"b":1}')}`);
    expect(digestOf({ a: 1 })).not.toBe(digestOf({ a: "1" }));
  });
});

function shuffleKeys(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(shuffleKeys);
  if (v !== null && typeof v === "object") {
    return Object.fromEntries(Object.entries(v).reverse().map(([k, x]) => [k, shuffleKeys(x)]));
  }
  return v;
}
