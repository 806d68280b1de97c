import { createHash } from "node:crypto";
import { mkdir, mkdtemp, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { collectArtifacts, guessArtifactKind, guessMediaType } from "./artifacts";

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "airlock-artifacts-test-"));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("artifact kinds and media types", () => {
  it.each([
    ["fix.patch", "patch"],
    ["changes/FIX.DIFF", "patch"],
    ["diagnosis.md", "diagnosis"],
    ["diagnosis-flaky-test.md", "diagnosis"],
    ["notes/diagnosis.txt", "report"],
    ["my-diagnosis.md", "report"],
    ["agent.log", "log"],
    ["summary.json", "report"],
  ] as const)("%s is a %s", (name, kind) => {
    expect(guessArtifactKind(name)).toBe(kind);
  });

  it("guesses media types from the extension", () => {
    expect(guessMediaType("fix.patch")).toBe("text/x-diff");
    expect(guessMediaType("diagnosis.md")).toBe("text/markdown");
    expect(guessMediaType("data.bin")).toBe("application/octet-stream");
  });
});

describe("collectArtifacts", () => {
  it("returns nothing for a missing folder", async () => {
    expect(await collectArtifacts(join(dir, "missing"))).toEqual({ artifacts: [], skipped: [] });
  });

  it("digests every regular file, sorted, with paths relative to the folder", async () => {
    await mkdir(join(dir, "nested"));
    await writeFile(join(dir, "b.patch"), "patch body");
    await writeFile(join(dir, "nested", "a.md"), "");
    const { artifacts, skipped } = await collectArtifacts(dir);
    expect(skipped).toEqual([]);
    expect(artifacts.map((a) => [a.name, a.sizeBytes, a.digest])).toEqual([
      ["b.patch", 10, `sha256:${createHash("sha256").update("patch body").digest("hex")}`],
      // The digest of zero bytes.
      ["nested/a.md", 0, "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"],
    ]);
  });

  it("skips symlinks, files over the size limit and files past the count limit", async () => {
    await writeFile(join(dir, "a.txt"), "a");
    await writeFile(join(dir, "b.txt"), "bb");
    await writeFile(join(dir, "big.txt"), "x".repeat(100));
    await writeFile(join(dir, "c.txt"), "c");
    await symlink("/etc/hostname", join(dir, "link.txt"));
    const { artifacts, skipped } = await collectArtifacts(dir, { maxFileBytes: 10, maxFiles: 2 });
    expect(artifacts.map((a) => a.name)).toEqual(["a.txt", "b.txt"]);
    expect(skipped).toEqual([
      { name: "link.txt", reason: "symbolic links are not collected" },
      { name: "big.txt", reason: "more than 2 artifacts" },
      { name: "c.txt", reason: "more than 2 artifacts" },
    ]);
    const sized = await collectArtifacts(dir, { maxFileBytes: 10, maxFiles: 10 });
    expect(sized.skipped).toContainEqual({ name: "big.txt", reason: "100 bytes is over the 10-byte limit" });
  });
});
