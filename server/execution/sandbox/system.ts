import { lstatSync, readdirSync, readlinkSync } from "node:fs";
import { join, resolve } from "node:path";
import type { SystemEntry } from "./bwrap-args";

/** The system folders, as they are on this machine (usr-merged folders are symlinks). */
export function systemEntries(): SystemEntry[] {
  const entries: SystemEntry[] = [];
  for (const path of ["/usr", "/bin", "/sbin", "/lib", "/lib64", "/lib32", "/libx32", "/etc", "/opt"]) {
    try {
      const info = lstatSync(path);
      entries.push({ path, symlinkTo: info.isSymbolicLink() ? readlinkSync(path) : null });
    } catch {
      /* not on this machine */
    }
  }
  return entries;
}


/**
 * What of the host an agent reads besides the system folders: the project (its node_modules
 * hold the agent tool chain), minus the data folder and any `.env` file, so no server secret
 * (auth secret, database password, environment files, the test servers' database URLs) is in a
 * file it can open.
 */
export function hostView(opts: { projectRoot: string; dataDir: string }): { readOnlyPaths: string[]; hiddenPaths: string[] } {
  const root = resolve(opts.projectRoot);
  const envFiles = (() => {
    try {
      return readdirSync(root).filter((n) => n.startsWith(".env")).map((n) => join(root, n));
    } catch {
      return [];
    }
  })();
  // test-results/ holds the test servers' database URLs while the suites run.
  return { readOnlyPaths: [root], hiddenPaths: [...new Set([resolve(opts.dataDir), join(root, ".airlock"), join(root, "test-results"), ...envFiles])] };
}
