import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { writeAtomically } from "./write-atomically";

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "write-atomically-"));
});
afterEach(() => rm(dir, { recursive: true, force: true }));

describe("writeAtomically", () => {
  it("racing writers of one file all succeed, and the file is one of them whole, with no temporary left", async () => {
    const file = join(dir, "note.json");
    const values = Array.from({ length: 20 }, (_, i) => JSON.stringify({ writer: i, body: "x".repeat(10_000) }));
    await Promise.all(values.map((v) => writeAtomically(file, v)));
    expect(values).toContain(await readFile(file, "utf8"));
    expect(await readdir(dir)).toEqual(["note.json"]);
  });
});
