import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { promisify } from "node:util";
import { systemEntries } from "./system";

// Whether this machine can run sandboxes: bubblewrap installed and able to create its
// namespaces (as the user sandboxes run as), socat for the egress forwarder, prlimit for the
// per-process limits. Checked once per process; admission refuses untrusted attempts with the
// reason when it fails.

const run = promisify(execFile);

export type SandboxAvailability =
  | { available: true; version: string; bwrap: string; socat: string; prlimit: string }
  | { available: false; reason: string };

export const installCommand = "apt-get install -y bubblewrap socat";

function which(name: string): string | null {
  for (const dir of ["/usr/bin", "/bin", "/usr/local/bin", "/usr/sbin", "/sbin"]) {
    if (existsSync(`${dir}/${name}`)) return `${dir}/${name}`;
  }
  return null;
}

/** The host uid sandboxes run as when the worker is root; otherwise the worker's own. */
export const sandboxesRunAsOtherUser = () => process.getuid?.() === 0;

let cached: Promise<SandboxAvailability> | undefined;

export function probeSandbox(): Promise<SandboxAvailability> {
  cached ??= (async (): Promise<SandboxAvailability> => {
    const bwrap = which("bwrap");
    if (!bwrap) return { available: false, reason: `sandbox unavailable: install bubblewrap (${installCommand})` };
    const socat = which("socat");
    if (!socat) return { available: false, reason: `sandbox unavailable: install socat (${installCommand})` };
    const prlimit = which("prlimit");
    if (!prlimit) return { available: false, reason: "sandbox unavailable: prlimit (util-linux) is missing" };
    const uid = sandboxesRunAsOtherUser() ? 1_999_999 : undefined;
    try {
      const { stdout } = await run(bwrap, ["--version"], { timeout: 5000 });
      // The same namespaces and system mounts an attempt gets, as the user it runs as.
      const system = systemEntries().flatMap((s) => (s.symlinkTo ? ["--symlink", s.symlinkTo, s.path] : ["--ro-bind", s.path, s.path]));
      await run(bwrap, ["--unshare-all", "--die-with-parent", "--uid", "1000", "--gid", "1000", ...system, "--proc", "/proc", "--dev", "/dev", "--", "true"], {
        timeout: 10_000,
        ...(uid ? { uid, gid: uid } : {}),
      });
      return { available: true, version: stdout.trim(), bwrap, socat, prlimit };
    } catch (err) {
      const text = ((err as { stderr?: string }).stderr ?? (err as Error).message).trim().split("\n").at(-1) ?? "";
      return { available: false, reason: `sandbox unavailable: bubblewrap cannot create its namespaces here (${text.slice(0, 200)})` };
    }
  })();
  return cached;
}

/** What admission reads of the probe. */
export const availabilityOf = (a: SandboxAvailability) => (a.available ? { available: true, reason: null } : { available: false, reason: a.reason });
