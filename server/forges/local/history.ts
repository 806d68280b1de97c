import { createHash } from "node:crypto";
import { assertRevision, git, GitError, gitIdentity } from "./git";
import { ensureBareRepo, resolveRevision } from "./repositories";

// A scripted history for a local-forge repository: commits given as full file snapshots with
// fixed dates, so their ids are known before git writes them (`commitIds`, pure) and are the
// same on every machine. `importHistory` writes the commits with `git fast-import` into the
// bare repository and creates the refs that are missing (branches, tags, pull-request heads);
// a ref that already exists is never moved, since a person may have pushed to it since.

export type HistoryCommit = {
  /** A name the caller refers to the commit by (unique within the history). */
  name: string;
  /** The parent's name; none for a root commit. Parents come before their children. */
  parent?: string;
  /** Every file of the commit's tree: path -> content. */
  files: Record<string, string>;
  message: string;
  date: Date;
};

export type HistoryRef = { ref: string; commit: string };

const sha1 = (data: Buffer) => createHash("sha1").update(data).digest();
const object = (type: string, body: Buffer) => sha1(Buffer.concat([Buffer.from(`${type} ${body.length}\0`), body]));

type Tree = Map<string, Buffer | Tree>;

function treeId(tree: Tree): Buffer {
  // git orders entries by name, a directory's name compared as if it ended in "/".
  const entries = [...tree.entries()].map(([name, v]) => ({ name, v, key: Buffer.from(v instanceof Map ? `${name}/` : name) }));
  entries.sort((a, b) => Buffer.compare(a.key, b.key));
  const body = Buffer.concat(
    entries.flatMap(({ name, v }) => [Buffer.from(v instanceof Map ? `40000 ${name}\0` : `100644 ${name}\0`), v instanceof Map ? treeId(v) : object("blob", v)]),
  );
  return object("tree", body);
}

function treeOf(files: Record<string, string>): Tree {
  const root: Tree = new Map();
  for (const [path, content] of Object.entries(files)) {
    const parts = path.split("/");
    if (parts.some((p) => p === "" || p === "." || p === "..")) throw new GitError(`file path "${path}" is not a plain relative path`, null, "");
    let dir = root;
    for (const part of parts.slice(0, -1)) {
      let next = dir.get(part);
      if (!(next instanceof Map)) {
        next = new Map();
        dir.set(part, next);
      }
      dir = next;
    }
    dir.set(parts.at(-1)!, Buffer.from(content, "utf8"));
  }
  return root;
}

const signature = (date: Date) => `${gitIdentity.name} <${gitIdentity.email}> ${Math.floor(date.getTime() / 1000)} +0000`;

/** The commit ids git will give the history's commits, by name. */
export function commitIds(commits: readonly HistoryCommit[]): Record<string, string> {
  const ids: Record<string, string> = {};
  for (const c of commits) {
    if (ids[c.name]) throw new GitError(`commit "${c.name}" appears twice in the history`, null, "");
    const parent = c.parent === undefined ? undefined : ids[c.parent];
    if (c.parent !== undefined && !parent) throw new GitError(`commit "${c.name}" comes before its parent "${c.parent}"`, null, "");
    const lines = [`tree ${treeId(treeOf(c.files)).toString("hex")}`, ...(parent ? [`parent ${parent}`] : []), `author ${signature(c.date)}`, `committer ${signature(c.date)}`];
    ids[c.name] = object("commit", Buffer.from(`${lines.join("\n")}\n\n${c.message}`, "utf8")).toString("hex");
  }
  return ids;
}

function fastImportStream(commits: readonly HistoryCommit[], ids: Record<string, string>): string {
  const data = (text: string) => `data ${Buffer.byteLength(text, "utf8")}\n${text}\n`;
  const out: string[] = [];
  const mark = new Map(commits.map((c, i) => [c.name, i + 1]));
  for (const c of commits) {
    // Each commit on its own scratch ref, deleted after the import: the real refs are created below.
    out.push(`commit refs/airlock-import/${ids[c.name]}\n`, `mark :${mark.get(c.name)}\n`, `author ${signature(c.date)}\n`, `committer ${signature(c.date)}\n`, data(c.message));
    if (c.parent !== undefined) out.push(`from :${mark.get(c.parent)}\n`);
    out.push("deleteall\n");
    for (const [path, content] of Object.entries(c.files)) out.push(`M 100644 inline ${path}\n`, data(content));
    out.push("\n");
  }
  return out.join("");
}

/**
 * Writes the history into the bare repository of `fullName` (created when missing) and creates
 * the missing refs. Idempotent. Returns the commit ids by name; throws if git computed another
 * id than `commitIds` (which would mean the history cannot be reproduced).
 */
export async function importHistory(opts: {
  dataDir: string;
  fullName: string;
  defaultBranch: string;
  commits: readonly HistoryCommit[];
  refs: readonly HistoryRef[];
}): Promise<{ path: string; ids: Record<string, string>; created: string[] }> {
  const ids = commitIds(opts.commits);
  const { path } = await ensureBareRepo(opts.dataDir, opts.fullName, opts.defaultBranch);
  let absent = 0;
  for (const c of opts.commits) if ((await resolveRevision(path, ids[c.name]!)) === null) absent++;
  if (absent > 0) {
    await git(["--git-dir", path, "fast-import", "--quiet", "--done"], { input: `${fastImportStream(opts.commits, ids)}done\n` });
    const scratch = (await git(["--git-dir", path, "for-each-ref", "--format=%(refname)", "refs/airlock-import/"])).split("\n").filter(Boolean);
    await git(["--git-dir", path, "update-ref", "--stdin"], { input: scratch.map((r) => `delete ${r}\n`).join("") });
  }
  for (const c of opts.commits) {
    const got = await resolveRevision(path, ids[c.name]!);
    if (got !== ids[c.name]) throw new GitError(`commit "${c.name}" of ${opts.fullName} was written as ${got ?? "nothing"}, not ${ids[c.name]}`, null, "");
  }
  const created: string[] = [];
  for (const r of opts.refs) {
    const sha = ids[r.commit];
    if (!sha) throw new GitError(`ref ${r.ref} names an unknown commit "${r.commit}"`, null, "");
    const exists = (await git(["--git-dir", path, "for-each-ref", "--format=%(refname)", assertRevision(r.ref)])).trim() === r.ref;
    if (exists) continue;
    // An empty old value: create only, never move a ref someone else just created.
    await git(["--git-dir", path, "update-ref", r.ref, sha, ""]);
    created.push(r.ref);
  }
  return { path, ids, created };
}
