import { constants as fsConstants } from "node:fs";
import { copyFile, lstat, mkdir, open, readdir, stat } from "node:fs/promises";
import { join } from "node:path";

// Claude Code's session files, kept past the attempt so the next attempt of a continuation can
// `--resume` them. The CLI writes a session's conversation to
// HOME/.claude/projects/<cwd with every other character as "-">/<session id>.jsonl; HOME is the
// attempt's own (removed at exit), so at exit the file is copied to the store, under the run
// that made it, and before a resumed launch it is copied into the new HOME under the new
// workspace's folder.
//
// HOME was the agent's to write: the copy runs outside the sandbox, so the session id must be a
// UUID, every folder on the way a real folder and the file a regular file (never a symbolic
// link to the server's own files), opened without following links, and bounded in size.

const maxSessionBytes = 32 * 1024 * 1024;
const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const runIdShape = /^[A-Za-z0-9_-]{1,64}$/;

export const isSessionId = (id: unknown): id is string => typeof id === "string" && uuid.test(id);

/** The folder under HOME/.claude/projects the CLI keeps a working directory's sessions in. */
export const projectFolder = (cwd: string) => cwd.replace(/[^A-Za-z0-9]/g, "-");

const storedPath = (store: string, runId: string, sessionId: string) => {
  if (!runIdShape.test(runId) || !isSessionId(sessionId)) throw new Error("not a run id and session id");
  return join(store, runId, `${sessionId}.jsonl`);
};

/** Whether the store holds a run's session (what a resumed launch needs). */
export async function storedSession(store: string, runId: string, sessionId: string): Promise<string | null> {
  if (!runIdShape.test(runId) || !isSessionId(sessionId)) return null;
  const path = storedPath(store, runId, sessionId);
  const info = await lstat(path).catch(() => null);
  return info?.isFile() ? path : null;
}

/** Copies the attempt's session file from its HOME into the store; says why not where it cannot. */
export async function saveSession(opts: { home: string; store: string; runId: string; sessionId: string }): Promise<{ saved: true } | { saved: false; reason: string }> {
  if (!isSessionId(opts.sessionId)) return { saved: false, reason: "the session id is not a UUID" };
  const projects = join(opts.home, ".claude", "projects");
  for (const dir of [join(opts.home, ".claude"), projects]) {
    const info = await lstat(dir).catch(() => null);
    if (!info?.isDirectory()) return { saved: false, reason: "the CLI left no session files" };
  }
  for (const entry of await readdir(projects, { withFileTypes: true })) {
    if (!entry.isDirectory()) continue;
    const source = join(projects, entry.name, `${opts.sessionId}.jsonl`);
    const handle = await open(source, fsConstants.O_RDONLY | fsConstants.O_NOFOLLOW).catch(() => null);
    if (!handle) continue;
    try {
      const info = await handle.stat();
      if (!info.isFile()) return { saved: false, reason: "the session file is not a regular file" };
      if (info.size > maxSessionBytes) return { saved: false, reason: `the session file is larger than ${maxSessionBytes / 1024 / 1024} MiB` };
      const content = await handle.readFile();
      const target = storedPath(opts.store, opts.runId, opts.sessionId);
      await mkdir(join(opts.store, opts.runId), { recursive: true, mode: 0o700 });
      const out = await open(target, fsConstants.O_WRONLY | fsConstants.O_CREAT | fsConstants.O_TRUNC | fsConstants.O_NOFOLLOW, 0o600);
      try {
        await out.writeFile(content);
      } finally {
        await out.close();
      }
      return { saved: true };
    } finally {
      await handle.close();
    }
  }
  return { saved: false, reason: "the CLI left no file for this session" };
}

/** Puts a stored session where the CLI, started in `cwd` with this HOME, finds it for --resume. */
export async function restoreSession(opts: { stored: string; home: string; cwd: string; sessionId: string }) {
  const dir = join(opts.home, ".claude", "projects", projectFolder(opts.cwd));
  await mkdir(dir, { recursive: true });
  if (!(await stat(opts.stored)).isFile()) throw new Error("the stored session is not a file");
  await copyFile(opts.stored, join(dir, `${opts.sessionId}.jsonl`));
}
