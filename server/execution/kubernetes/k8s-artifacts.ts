// Artifacts from Kubernetes attempts. A pod's files die with it and the worker cannot mount its
// volume, so the Job's command is wrapped: the agent runs, then a POSIX shell loop prints every
// regular file under $AIRLOCK_ARTIFACTS_DIR (/artifacts) to stdout as JSON-line frames (base64 chunks, then an end frame)
// and exits with the agent's status. The worker reads them from the pod log with the agent's
// output, takes the frames out before decoding, and rebuilds the files in the attempt's local
// artifacts folder, where they are digested and stored like a local attempt's.
//
// Frames carry no authority: the agent could print them itself, but it could equally write the
// file, so a frame is treated exactly like a file in /artifacts (names and sizes bounded, digest
// computed here from the bytes, never taken from the pod). Needs /bin/sh and base64 in the image
// (coreutils or busybox). The pod log is the transport, so the cluster's log size limit (10 MiB
// per container by default) bounds what arrives; a file cut off by it is dropped and reported.

export const FRAME_KEY = "airlock_artifact";

const script = [
  '"$@"',
  "status=$?",
  'if cd "${AIRLOCK_ARTIFACTS_DIR:-/artifacts}" 2>/dev/null; then',
  "  find . -type f | LC_ALL=C sort | while IFS= read -r f; do",
  '    name=${f#./}',
  '    case "$name" in',
  `      *[!A-Za-z0-9._/-]*|*..*) printf '{"${FRAME_KEY}":"","skipped":"a file name outside [A-Za-z0-9._/-]"}\\n'; continue ;;`,
  "    esac",
  `    base64 "$f" | while IFS= read -r chunk; do printf '{"${FRAME_KEY}":"%s","b64":"%s"}\\n' "$name" "$chunk"; done`,
  `    printf '{"${FRAME_KEY}":"%s","end":true}\\n' "$name"`,
  "  done",
  "fi",
  'exit "$status"',
].join("\n");

/** The Job's argv: the agent's argv run under the frame-printing wrapper. */
export function withArtifactFrames(argv: string[]): string[] {
  return ["/bin/sh", "-c", script, "airlock-agent", ...argv];
}

export type ArtifactFrameLimits = { maxFileBytes: number; maxFiles: number; maxTotalBytes: number };
export const defaultFrameLimits: ArtifactFrameLimits = { maxFileBytes: 10 * 1024 * 1024, maxFiles: 100, maxTotalBytes: 20 * 1024 * 1024 };

const safeName = /^[A-Za-z0-9._-]+(\/[A-Za-z0-9._-]+)*$/;
const base64 = /^[A-Za-z0-9+/]*={0,2}$/;

export type FramedFile = { name: string; bytes: Buffer };

/**
 * Takes artifact frames out of a pod's output, line by line. `accept(line)` is true when the
 * line was a frame (the caller then does not decode it as agent output); `finish()` returns the
 * complete files, in order, and what was left out with why.
 */
export function createArtifactFrameReader(limits: ArtifactFrameLimits = defaultFrameLimits) {
  const open = new Map<string, { chunks: string[]; chars: number }>();
  const files: FramedFile[] = [];
  const skipped: { name: string; reason: string }[] = [];
  const dropped = new Set<string>();
  let total = 0;
  const drop = (name: string, reason: string) => {
    open.delete(name);
    if (!dropped.has(name)) skipped.push({ name, reason });
    dropped.add(name);
  };

  function accept(line: string): boolean {
    if (!line.startsWith(`{"${FRAME_KEY}"`)) return false;
    let frame: unknown;
    try {
      frame = JSON.parse(line);
    } catch {
      return false;
    }
    const f = frame as { [FRAME_KEY]?: unknown; b64?: unknown; end?: unknown; skipped?: unknown };
    const name = f[FRAME_KEY];
    if (typeof name !== "string") return false;
    if (typeof f.skipped === "string") {
      skipped.push({ name: name || "(unnamed)", reason: f.skipped });
      return true;
    }
    if (!safeName.test(name) || name.split("/").includes("..")) {
      drop(name.slice(0, 200), "not a safe relative file name");
      return true;
    }
    if (dropped.has(name)) return true;
    if (typeof f.b64 === "string") {
      if (!base64.test(f.b64)) return drop(name, "a malformed base64 chunk"), true;
      const entry = open.get(name) ?? { chunks: [], chars: 0 };
      entry.chunks.push(f.b64);
      entry.chars += f.b64.length;
      // 4 base64 characters carry 3 bytes: refuse early, before holding a huge file in memory.
      if ((entry.chars / 4) * 3 > limits.maxFileBytes + 3) return drop(name, `larger than ${limits.maxFileBytes} bytes`), true;
      open.set(name, entry);
      return true;
    }
    if (f.end === true) {
      const entry = open.get(name) ?? { chunks: [], chars: 0 };
      open.delete(name);
      const bytes = Buffer.from(entry.chunks.join(""), "base64");
      if (files.some((x) => x.name === name)) return drop(name, "sent twice"), true;
      if (files.length >= limits.maxFiles) return drop(name, `more than ${limits.maxFiles} files`), true;
      if (bytes.length > limits.maxFileBytes) return drop(name, `larger than ${limits.maxFileBytes} bytes`), true;
      if (total + bytes.length > limits.maxTotalBytes) return drop(name, `over the ${limits.maxTotalBytes}-byte total for one attempt`), true;
      total += bytes.length;
      files.push({ name, bytes });
      return true;
    }
    return false;
  }

  function finish(): { files: FramedFile[]; skipped: { name: string; reason: string }[] } {
    // A file with no end frame was cut off (the pod died, or the log hit its size limit).
    for (const name of open.keys()) drop(name, "incomplete: the pod's log ended before the file did");
    return { files: [...files], skipped: [...skipped] };
  }

  return { accept, finish };
}
