import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { buildLogExcerpt } from "./log-excerpt";

const numbered = (n: number, at?: Record<number, string>) =>
  Array.from({ length: n }, (_, i) => at?.[i + 1] ?? `line ${i + 1}`).join("\n");

describe("buildLogExcerpt", () => {
  it("keeps a short log whole", () => {
    const log = numbered(5);
    expect(buildLogExcerpt(log)).toEqual({
      text: log,
      startLine: 1,
      endLine: 5,
      focusLine: null,
      totalLines: 5,
      truncated: false,
      bytes: log.length,
    });
  });

  it("centres on the first failure and reports where the excerpt starts", () => {
    const log = numbered(1_000, { 600: "src/a.c:1:1: error: boom" });
    const excerpt = buildLogExcerpt(log, { maxLines: 11 });
    expect(excerpt).toMatchObject({ startLine: 595, endLine: 605, focusLine: 600, totalLines: 1_000, truncated: true });
    expect(excerpt.text.split("\n")[5]).toBe("src/a.c:1:1: error: boom");
  });

  it("shifts the window at the edges instead of shrinking it", () => {
    const early = buildLogExcerpt(numbered(100, { 2: "ERROR: failed to solve: x" }), { maxLines: 10 });
    expect(early).toMatchObject({ startLine: 1, endLine: 10, focusLine: 2 });
    const late = buildLogExcerpt(numbered(100), { maxLines: 10, focusLine: 99 });
    expect(late).toMatchObject({ startLine: 91, endLine: 100, focusLine: 99 });
  });

  it("takes the tail when no failure is found", () => {
    expect(buildLogExcerpt(numbered(50), { maxLines: 5 })).toMatchObject({
      startLine: 46,
      endLine: 50,
      focusLine: null,
      text: numbered(50).split("\n").slice(45).join("\n"),
    });
  });

  it("honours an explicit focus line, clamped to the log", () => {
    expect(buildLogExcerpt(numbered(30), { maxLines: 3, focusLine: 10 })).toMatchObject({ startLine: 9, endLine: 11 });
    expect(buildLogExcerpt(numbered(30), { maxLines: 3, focusLine: 500 })).toMatchObject({ startLine: 28, endLine: 30, focusLine: 30 });
  });

  it("drops the lines farthest from the focus to fit the byte limit", () => {
    const log = numbered(100, { 50: "src/a.c:1:1: error: boom" });
    const excerpt = buildLogExcerpt(log, { maxLines: 41, maxBytes: 200 });
    expect(excerpt.bytes).toBeLessThanOrEqual(200);
    expect(excerpt.bytes).toBe(Buffer.byteLength(excerpt.text));
    expect(excerpt.startLine).toBeLessThanOrEqual(50);
    expect(excerpt.endLine).toBeGreaterThanOrEqual(50);
    // still roughly centred
    expect(Math.abs(50 - excerpt.startLine - (excerpt.endLine - 50))).toBeLessThanOrEqual(1);
    expect(excerpt.text.split("\n")).toHaveLength(excerpt.endLine - excerpt.startLine + 1);
  });

  it("cuts very long lines without splitting a character", () => {
    const log = `ok\n${"é".repeat(5_000)}\nerror: done`;
    const excerpt = buildLogExcerpt(log, { maxLineBytes: 101 });
    const long = excerpt.text.split("\n")[1] ?? "";
    expect(long).toMatch(/^é{50} …\[\+9900 bytes\]$/);
    expect(excerpt.truncated).toBe(true);
  });

  it("strips ANSI codes unless asked not to", () => {
    const log = "\x1b[31mred\x1b[0m";
    expect(buildLogExcerpt(log).text).toBe("red");
    expect(buildLogExcerpt(log, { stripAnsi: false }).text).toBe(log);
  });

  it("handles an empty log", () => {
    expect(buildLogExcerpt("")).toMatchObject({ text: "", startLine: 1, endLine: 0, totalLines: 0 });
  });

  it("keeps line numbers true on a real log", () => {
    const log = readFileSync(new URL("../ci-events/failure/fixtures/logs/vitest-assert-a.log", import.meta.url), "utf8");
    const excerpt = buildLogExcerpt(log, { maxLines: 9 });
    const lines = log.split("\n");
    const first = excerpt.text.split("\n")[0];
    expect(first).toBe((lines[excerpt.startLine - 1] ?? "").replace(/\x1b\[[0-9;]*m/g, ""));
    expect(excerpt.text).toContain("FAIL");
  });

  it("is fast on a huge log", () => {
    const log = numbered(400_000, { 200_000: "FAIL src/x.test.ts > a > b" });
    const started = performance.now();
    const excerpt = buildLogExcerpt(log);
    expect(performance.now() - started).toBeLessThan(3_000);
    expect(excerpt.focusLine).toBe(200_000);
  });
});
