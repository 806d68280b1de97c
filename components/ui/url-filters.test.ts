import { createLoader, createSerializer, parseAsStringLiteral } from "nuqs/server";
import { describe, expect, it } from "vitest";
import { parseAsText, toInput } from "./url-filters";

const parsers = { q: parseAsText(10), kind: parseAsStringLiteral(["a", "b"] as const) };
const load = createLoader(parsers);
const serialize = createSerializer(parsers);

describe("filters in the URL", () => {
  it("trims and bounds free text, and reads blank text as absent", () => {
    expect(load({ q: "  flaky  " }).q).toBe("flaky");
    expect(load({ q: "x".repeat(5_000) }).q).toBe("x".repeat(10));
    expect(load({ q: "   " }).q).toBeNull();
  });

  it("ignores values outside an enum and keeps only the first of repeated keys", () => {
    expect(load({ kind: "c" }).kind).toBeNull();
    expect(load({ kind: ["b", "a"] }).kind).toBe("b");
  });

  it("round-trips text with characters that mean something in a URL", () => {
    const q = "a&b=c #1+";
    const search = serialize({ q: q.slice(0, 10), kind: "a" });
    expect(load(new URLSearchParams(search))).toEqual({ q: q.slice(0, 10), kind: "a" });
  });

  it("turns absent filters into undefined for the procedures", () => {
    expect(toInput({ q: null, kind: "a" })).toEqual({ q: undefined, kind: "a" });
  });
});
