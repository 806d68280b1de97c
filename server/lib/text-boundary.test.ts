import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { NUL_REPLACEMENT, boundJson, boundText, cleanText, findTextProblem, formatSize, isCleanText } from "./text-boundary";

const deep = (n: number, leaf: unknown = "x"): unknown => {
  let v = leaf;
  for (let i = 0; i < n; i++) v = i % 2 === 0 ? [v] : { k: v };
  return v;
};

describe("cleanText", () => {
  it("replaces NUL and lone surrogates and keeps everything else, pairs included", () => {
    expect(cleanText("a\u0000b")).toBe(`a${NUL_REPLACEMENT}b`);
    expect(cleanText("a\ud800b\udc00c")).toBe("a\ufffdb\ufffdc");
    expect(cleanText("emoji 😀 ok \u001b[31m")).toBe("emoji 😀 ok \u001b[31m");
    expect(isCleanText("😀")).toBe(true);
    expect(isCleanText("\ud83d")).toBe(false);
  });
  it("always yields storable text (a property)", () => {
    fc.assert(
      fc.property(fc.string({ unit: "binary" }), (s) => {
        const out = cleanText(s);
        return out.length === s.length && isCleanText(out);
      }),
    );
  });
});

describe("boundText", () => {
  it("cuts with a marker naming the bytes left out, never splitting a pair", () => {
    expect(boundText("a".repeat(10), 4)).toBe("aaaa…[cut: 6 B]");
    expect(boundText("x".repeat(2_100_004), 4)).toBe("xxxx…[cut: 2.1 MB]");
    const cut = boundText("ab😀cd", 3);
    expect(cut.startsWith("ab…")).toBe(true);
    expect(isCleanText(cut)).toBe(true);
    expect(formatSize(64_000)).toBe("64.0 kB");
  });
});

describe("boundJson", () => {
  it("copies 100,000-deep JSON without recursion and marks where it was cut", () => {
    const value = JSON.parse(`${"[".repeat(100_000)}1${"]".repeat(100_000)}`);
    const { value: out, changed } = boundJson(value, { maxDepth: 8 });
    expect(changed).toBe(true);
    expect(JSON.stringify(out)).toBe(`${"[".repeat(8)}"…[cut: nested deeper than 8 levels]"${"]".repeat(8)}`);
    expect(() => JSON.stringify(boundJson(deep(60_000)).value)).not.toThrow();
  });
  it("cleans keys and values, keeps colliding keys apart", () => {
    const { value } = boundJson({ "a\u0000": "x\u0000", "a\u2400": 1, "\ud800": ["\udfff"] });
    expect(value).toEqual({ "a\u2400": `x${NUL_REPLACEMENT}`, "a\u2400′": 1, "\ufffd": ["\ufffd"] });
  });
  it("bounds the total size with a marker and leaves clean small values untouched", () => {
    const big = { items: Array.from({ length: 1000 }, (_, i) => `item-${i}-${"z".repeat(100)}`) };
    const { value, changed } = boundJson(big, { maxTotalChars: 10_000 });
    expect(changed).toBe(true);
    expect(JSON.stringify(value).length).toBeLessThan(12_000);
    expect(value.items.at(-1)).toMatch(/^…\[cut: \d+ more items\]$/);
    const small = { a: [1, "two", { three: null, four: true }] };
    expect(boundJson(small)).toEqual({ value: small, changed: false });
  });
  it("a key like __proto__ stays data", () => {
    const parsed = JSON.parse('{"__proto__": {"polluted": true}}');
    const { value } = boundJson(parsed);
    expect(Object.keys(value)).toEqual(["__proto__"]);
    expect(({} as { polluted?: boolean }).polluted).toBeUndefined();
  });
});

describe("findTextProblem", () => {
  it("names the first unusable spot", () => {
    expect(findTextProblem({ runId: "a\u0000" })).toEqual({ path: "runId", problem: "nul" });
    expect(findTextProblem({ a: { "k\ud800": 1 } })).toEqual({ path: "a.k\ufffd", problem: "lone_surrogate" });
    expect(findTextProblem(new Map([["m", ["\u0000"]]]))).toEqual({ path: "m.0", problem: "nul" });
    expect(findTextProblem(deep(100_000), 64)).toMatchObject({ problem: "too_deep" });
    expect(findTextProblem({ fine: ["ok", 1, null, { emoji: "😀" }] })).toBeNull();
  });
});
