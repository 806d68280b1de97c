import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createArtifactFrameReader, FRAME_KEY, withArtifactFrames } from "./k8s-artifacts";

// The pod side (the wrapper script, run here under a real /bin/sh) and the worker side (the
// frame reader) of artifact collection from Kubernetes attempts.

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function runWrapped(agentScript: string, before?: (dir: string) => void) {
  const dir = mkdtempSync(join(tmpdir(), "airlock-k8s-art-"));
  dirs.push(dir);
  before?.(dir);
  const [cmd, ...args] = withArtifactFrames(["/bin/sh", "-c", agentScript]);
  const env: Record<string, string> = { PATH: process.env.PATH ?? "/usr/bin:/bin", AIRLOCK_ARTIFACTS_DIR: dir };
  const r = spawnSync(cmd!, args, { env: env as NodeJS.ProcessEnv, encoding: "utf8", maxBuffer: 16 * 1024 * 1024 });
  if (r.error) throw r.error;
  return { status: r.status, lines: r.stdout.split("\n").filter(Boolean), dir };
}

const frame = (name: string, rest: Record<string, unknown>) => JSON.stringify({ [FRAME_KEY]: name, ...rest });

describe("artifact frames from a pod", () => {
  it("round-trips text and binary files, keeps the agent's output and exit status, skips unsafe names", () => {
    const binary = randomBytes(100_000); // every byte value, several base64 lines
    const { status, lines } = runWrapped(
      [
        'echo \'{"type":"message","payload":{"role":"assistant","text":"done"}}\'',
        'printf "diff --git a/x b/x\\n" > "$AIRLOCK_ARTIFACTS_DIR/fix.patch"',
        'printf x > "$AIRLOCK_ARTIFACTS_DIR/bad name.txt"',
        "exit 3",
      ].join("\n"),
      (dir) => {
        mkdirSync(join(dir, "reports"));
        writeFileSync(join(dir, "reports", "data.bin"), binary);
      },
    );
    expect(status).toBe(3);
    const reader = createArtifactFrameReader();
    const output = lines.filter((l) => !reader.accept(l));
    expect(output).toEqual(['{"type":"message","payload":{"role":"assistant","text":"done"}}']);
    const { files, skipped } = reader.finish();
    expect(files.map((f) => f.name)).toEqual(["fix.patch", "reports/data.bin"]);
    expect(files[0]!.bytes.toString("utf8")).toBe("diff --git a/x b/x\n");
    expect(files[1]!.bytes.equals(binary)).toBe(true);
    expect(skipped).toEqual([{ name: "(unnamed)", reason: "a file name outside [A-Za-z0-9._/-]" }]);
  });

  it("exits with the agent's status when there is no artifacts folder", () => {
    const { status, lines } = runWrapped('rmdir "$AIRLOCK_ARTIFACTS_DIR"; echo plain; exit 0');
    expect(status).toBe(0);
    expect(lines).toEqual(["plain"]);
  });
});

describe("createArtifactFrameReader", () => {
  const b64 = (s: string) => Buffer.from(s).toString("base64");

  it("leaves anything that is not a frame to the decoder", () => {
    const reader = createArtifactFrameReader();
    for (const line of ["plain text", '{"type":"log"}', `{"${FRAME_KEY}": broken`, frame("x", {}), JSON.stringify({ other: 1, [FRAME_KEY]: "x" })]) {
      expect(reader.accept(line), line).toBe(false);
    }
    expect(reader.finish()).toEqual({ files: [], skipped: [] });
  });

  it("refuses unsafe names, malformed chunks, duplicates, cut-off files and anything over the limits", () => {
    const reader = createArtifactFrameReader({ maxFileBytes: 10, maxFiles: 2, maxTotalBytes: 15 });
    const send = (name: string, content: string) => {
      expect(reader.accept(frame(name, { b64: b64(content) }))).toBe(true);
      expect(reader.accept(frame(name, { end: true }))).toBe(true);
    };
    send("../escape", "x");
    send("/abs", "x");
    expect(reader.accept(frame("bad-chunk", { b64: "not base64!" }))).toBe(true);
    send("big.txt", "01234567890123");
    send("a.txt", "0123456789");
    send("a.txt", "again");
    send("b.txt", "0123456789");
    expect(reader.accept(frame("cut.txt", { b64: b64("half") }))).toBe(true);
    const { files, skipped } = reader.finish();
    expect(files.map((f) => [f.name, f.bytes.toString()])).toEqual([["a.txt", "0123456789"]]);
    expect(skipped).toEqual([
      { name: "../escape", reason: "not a safe relative file name" },
      { name: "/abs", reason: "not a safe relative file name" },
      { name: "bad-chunk", reason: "a malformed base64 chunk" },
      { name: "big.txt", reason: "larger than 10 bytes" },
      { name: "a.txt", reason: "sent twice" },
      { name: "b.txt", reason: "over the 15-byte total for one attempt" },
      { name: "cut.txt", reason: "incomplete: the pod's log ended before the file did" },
    ]);
  });
});
