import { createHash } from "node:crypto";
import { createReadStream } from "node:fs";
import { lstat, readdir } from "node:fs/promises";
import { basename, extname, join, relative, sep } from "node:path";
import type { ArtifactKind } from "@/server/db/generated/enums";
import type { CollectedArtifact } from "./types";

// Collects what an agent left in its artifacts folder: regular files only (a
// symlink could point anywhere on the runner), bounded in size and number,
// each with its sha256 digest, a kind and a media type.

export type ArtifactLimits = { maxFileBytes: number; maxFiles: number };
export const defaultArtifactLimits: ArtifactLimits = { maxFileBytes: 10 * 1024 * 1024, maxFiles: 100 };

export type CollectResult = {
  artifacts: CollectedArtifact[];
  /** Files left out, with why (shown to the user as system log lines). */
  skipped: Array<{ name: string; reason: string }>;
};

export function guessArtifactKind(name: string): ArtifactKind {
  const base = basename(name).toLowerCase();
  if (base.endsWith(".patch") || base.endsWith(".diff")) return "patch";
  if (base.startsWith("diagnosis") && base.endsWith(".md")) return "diagnosis";
  if (base.endsWith(".log")) return "log";
  return "report";
}

const mediaTypes: Record<string, string> = {
  ".patch": "text/x-diff",
  ".diff": "text/x-diff",
  ".md": "text/markdown",
  ".txt": "text/plain",
  ".log": "text/plain",
  ".json": "application/json",
  ".html": "text/html",
  ".xml": "application/xml",
  ".csv": "text/csv",
};

export function guessMediaType(name: string): string {
  return mediaTypes[extname(name).toLowerCase()] ?? "application/octet-stream";
}

export async function sha256File(path: string): Promise<string> {
  const hash = createHash("sha256");
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return `sha256:${hash.digest("hex")}`;
}

export async function collectArtifacts(dir: string, limits: ArtifactLimits = defaultArtifactLimits): Promise<CollectResult> {
  const result: CollectResult = { artifacts: [], skipped: [] };
  const files: string[] = [];

  async function walk(current: string): Promise<void> {
    let entries;
    try {
      entries = await readdir(current, { withFileTypes: true });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "ENOENT") return;
      throw err;
    }
    for (const entry of entries) {
      const full = join(current, entry.name);
      const name = relative(dir, full).split(sep).join("/");
      if (entry.isDirectory()) await walk(full);
      else if (entry.isFile()) files.push(full);
      else result.skipped.push({ name, reason: entry.isSymbolicLink() ? "symbolic links are not collected" : "not a regular file" });
    }
  }
  await walk(dir);
  files.sort();

  for (const path of files) {
    const name = relative(dir, path).split(sep).join("/");
    if (result.artifacts.length >= limits.maxFiles) {
      result.skipped.push({ name, reason: `more than ${limits.maxFiles} artifacts` });
      continue;
    }
    const stat = await lstat(path);
    if (stat.size > limits.maxFileBytes) {
      result.skipped.push({ name, reason: `${stat.size} bytes is over the ${limits.maxFileBytes}-byte limit` });
      continue;
    }
    result.artifacts.push({
      kind: guessArtifactKind(name),
      name,
      path,
      digest: await sha256File(path),
      sizeBytes: stat.size,
      mediaType: guessMediaType(name),
    });
  }
  return result;
}
