import { mkdirSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { projectFolder, restoreSession, saveSession, storedSession } from "./session-store";

// The session file is copied from the agent's HOME outside the sandbox: a hostile agent must not
// make the copy read the server's own files, or write outside the store.

const id = "0f8fad5b-d9cb-469f-a165-70867728950e";

function home() {
  const root = mkdtempSync(join(tmpdir(), "airlock-session-store-"));
  const h = join(root, "home");
  mkdirSync(join(h, ".claude", "projects", projectFolder("/work/ws")), { recursive: true });
  return { root, home: h, store: join(root, "store"), file: join(h, ".claude", "projects", projectFolder("/work/ws"), `${id}.jsonl`) };
}

describe("the Claude session store", () => {
  it("keeps a session file under its run and puts it back where the CLI looks for the new workspace", async () => {
    const h = home();
    writeFileSync(h.file, '{"type":"user"}\n');
    expect(await saveSession({ home: h.home, store: h.store, runId: "run1", sessionId: id })).toEqual({ saved: true });
    const stored = await storedSession(h.store, "run1", id);
    expect(stored).not.toBeNull();
    expect(await storedSession(h.store, "run2", id)).toBeNull();
    const next = join(h.root, "next");
    await restoreSession({ stored: stored!, home: next, cwd: "/tmp/other ws", sessionId: id });
    expect(readFileSync(join(next, ".claude", "projects", "-tmp-other-ws", `${id}.jsonl`), "utf8")).toBe('{"type":"user"}\n');
  });

  it("refuses a session file that is a symbolic link (to a server file), and a session id that is no UUID", async () => {
    const h = home();
    const secret = join(h.root, "server-secret");
    writeFileSync(secret, "DATABASE_URL=postgres://secret\n");
    symlinkSync(secret, h.file);
    expect(await saveSession({ home: h.home, store: h.store, runId: "run1", sessionId: id })).toMatchObject({ saved: false });
    expect(await storedSession(h.store, "run1", id)).toBeNull();
    expect(await saveSession({ home: h.home, store: h.store, runId: "run1", sessionId: "../../etc/passwd" })).toEqual({ saved: false, reason: "the session id is not a UUID" });
    expect(await storedSession(h.store, "../x", id)).toBeNull();
  });

  it("refuses a projects folder that is a symbolic link", async () => {
    const h = home();
    const elsewhere = join(h.root, "elsewhere");
    mkdirSync(join(elsewhere, "p"), { recursive: true });
    writeFileSync(join(elsewhere, "p", `${id}.jsonl`), "x\n");
    const h2 = join(h.root, "home2");
    mkdirSync(join(h2, ".claude"), { recursive: true });
    symlinkSync(elsewhere, join(h2, ".claude", "projects"));
    expect(await saveSession({ home: h2, store: h.store, runId: "run1", sessionId: id })).toEqual({ saved: false, reason: "the CLI left no session files" });
  });
});
