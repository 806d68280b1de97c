import { spawn } from "node:child_process";
import { resolve } from "node:path";

// Runs git with an argv (never a shell), a timeout, and an environment that ignores the user's
// and the system's git configuration, so the local forge behaves the same on every machine and
// never prompts for credentials.

export class GitError extends Error {
  constructor(
    message: string,
    readonly exitCode: number | null,
    readonly stderr: string,
  ) {
    super(message);
    this.name = "GitError";
  }
}

export const gitIdentity = { name: "Airlock", email: "airlock@airlock.local" };

export function gitEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: Record<string, string> = {
    PATH: "/usr/local/bin:/usr/bin:/bin",
    HOME: "/nonexistent",
    LANG: "C.UTF-8",
    GIT_CONFIG_NOSYSTEM: "1",
    GIT_CONFIG_GLOBAL: "/dev/null",
    GIT_TERMINAL_PROMPT: "0",
    GIT_AUTHOR_NAME: gitIdentity.name,
    GIT_AUTHOR_EMAIL: gitIdentity.email,
    GIT_COMMITTER_NAME: gitIdentity.name,
    GIT_COMMITTER_EMAIL: gitIdentity.email,
    ...extra,
  };
  // The cast only drops Next's global claim that NODE_ENV is always set: git must not inherit it.
  return env as NodeJS.ProcessEnv;
}

export async function git(
  args: string[],
  opts: { cwd?: string; env?: Record<string, string>; input?: string; timeoutMs?: number } = {},
): Promise<string> {
  const cwd = resolve(opts.cwd ?? ".");
  return new Promise((resolvePromise, reject) => {
    const child = spawn("git", args, { cwd, env: gitEnv(opts.env), stdio: ["pipe", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (c: string) => (stdout += c));
    child.stderr.setEncoding("utf8").on("data", (c: string) => (stderr += c.slice(0, 10_000)));
    const timer = setTimeout(() => child.kill("SIGKILL"), opts.timeoutMs ?? 120_000);
    child.on("error", (err) => {
      clearTimeout(timer);
      reject(new GitError(`git ${args[0]} could not start: ${err.message}`, null, ""));
    });
    child.on("close", (code) => {
      clearTimeout(timer);
      if (code === 0) resolvePromise(stdout);
      else reject(new GitError(`git ${args.join(" ")} failed (${code ?? "killed"}): ${stderr.trim().split("\n").slice(-3).join(" ")}`, code, stderr));
    });
    child.stdin.on("error", () => {});
    child.stdin.end(opts.input ?? "");
  });
}

/** A full 40-hex commit id, or a ref name git can resolve; refuses anything that could be an option. */
export function assertRevision(rev: string): string {
  if (!/^[A-Za-z0-9._/-]{1,200}$/.test(rev) || rev.startsWith("-")) throw new GitError(`invalid revision "${rev}"`, null, "");
  return rev;
}
