import { randomUUID } from "node:crypto";
import { rename, writeFile } from "node:fs/promises";

/**
 * Writes `data` to `file` through a temporary file and a rename: a crash never leaves half a
 * file, and each writer has a temporary file of its own, so two racing writers never rename
 * each other's (the last rename wins, whole).
 */
export async function writeAtomically(file: string, data: string | Buffer): Promise<void> {
  const tmp = `${file}.${randomUUID()}.tmp`;
  await writeFile(tmp, data);
  await rename(tmp, file);
}
