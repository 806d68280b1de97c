import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import type { GithubClient } from "./client";
import { git, GitError } from "../local/git";
import { ForgeError, type ForgeWriteBackRequest, commitMessage } from "../types";

// The pieces every GitHub write-back shares: owner/name, GitHub's errors in the forge's words, and
// a patch turned into a commit through the git data API (no ref moved: the caller points a branch
// at it, fast-forward only for push_commits, a new ref for open_pr).

export function split(repository: string): { owner: string; repo: string } {
  const [owner, repo] = repository.split("/");
  if (!owner || !repo) throw new ForgeError(`"${repository}" is not owner/name`, "forge_error");
  return { owner, repo };
}

export function forgeErrorOf(err: unknown, what: string): ForgeError {
  if (err instanceof ForgeError) return err;
  const e = err as { status?: number; message?: string };
  const reason = e.status === 404 ? "not_found" : e.status === 422 || e.status === 409 ? "head_moved" : "forge_error";
  return new ForgeError(`GitHub refused to ${what}: ${e.status ?? ""} ${e.message ?? String(err)}`.trim(), reason);
}

/** Paths a unified diff touches: [old path or null (new file), new path or null (deleted)]. */
export function patchPaths(patch: string): { from: string | null; to: string | null }[] {
  const out: { from: string | null; to: string | null }[] = [];
  const lines = patch.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const a = lines[i];
    const b = lines[i + 1];
    if (a?.startsWith("--- ") && b?.startsWith("+++ ")) {
      const strip = (s: string) => {
        const p = s.slice(4).split("\t")[0]?.trim() ?? "";
        return p === "/dev/null" ? null : p.replace(/^[ab]\//, "");
      };
      out.push({ from: strip(a), to: strip(b) });
      i++;
    }
  }
  return out;
}

/**
 * The approved patch as a new commit whose parent is `tip`, through the git data API (the touched
 * files read at the tip, the patch applied with `git apply` in a scratch folder, blobs and a tree
 * on the tip's tree). No ref moves: the caller points a branch at it.
 */
export async function createPatchCommit(octokit: GithubClient, req: ForgeWriteBackRequest, tip: string): Promise<{ sha: string; html_url: string }> {
  const { owner, repo } = split(req.target.repository);
  if (!req.patch) throw new ForgeError("a commit needs a patch", "forge_error");
  const patch = req.patch;
  const work = await mkdtemp(join(tmpdir(), "airlock-gh-"));
  try {
    const { data: base } = await octokit.rest.git.getCommit({ owner, repo, commit_sha: tip });
    // The tree gives each touched file's blob and mode (an executable stays executable).
    const { data: baseTree } = await octokit.rest.git.getTree({ owner, repo, tree_sha: base.tree.sha, recursive: "1" });
    const entries = new Map(baseTree.tree.filter((e) => e.type === "blob" && e.path && e.sha).map((e) => [e.path as string, { sha: e.sha as string, mode: e.mode as string }]));
    const paths = patchPaths(patch);
    const inside = (p: string) => {
      const file = resolve(work, p);
      if (!file.startsWith(`${work}/`)) throw new ForgeError(`path ${p} leaves the repository`, "patch_does_not_apply");
      return file;
    };
    for (const p of paths) {
      if (!p.from) continue;
      const entry = entries.get(p.from);
      if (!entry) throw new ForgeError(`${p.from} is not a file at ${tip.slice(0, 12)}${baseTree.truncated ? " (the tree listing was truncated)" : ""}`, "patch_does_not_apply");
      const { data: blob } = await octokit.rest.git.getBlob({ owner, repo, file_sha: entry.sha });
      const file = inside(p.from);
      await mkdir(dirname(file), { recursive: true });
      await writeFile(file, Buffer.from(blob.content, blob.encoding === "base64" ? "base64" : "utf8"));
    }
    try {
      await git(["apply", "--whitespace=nowarn", "-"], { cwd: work, input: patch });
    } catch (err) {
      throw new ForgeError(`the patch does not apply at ${tip.slice(0, 12)}: ${err instanceof GitError ? err.stderr.trim().slice(0, 1000) : String(err)}`, "patch_does_not_apply");
    }
    const tree: { path: string; mode: "100644" | "100755"; type: "blob"; sha: string | null }[] = [];
    for (const p of paths) {
      if (p.from && p.from !== p.to) tree.push({ path: p.from, mode: "100644", type: "blob", sha: null });
      if (!p.to) continue;
      // base64 keeps any bytes intact (a utf-8 round trip would mangle non-text files).
      const content = (await readFile(inside(p.to))).toString("base64");
      const { data: blob } = await octokit.rest.git.createBlob({ owner, repo, content, encoding: "base64" });
      const mode = entries.get(p.from ?? p.to)?.mode === "100755" ? "100755" : "100644";
      tree.push({ path: p.to, mode, type: "blob", sha: blob.sha });
    }
    const { data: newTree } = await octokit.rest.git.createTree({ owner, repo, base_tree: base.tree.sha, tree });
    const { data: commit } = await octokit.rest.git.createCommit({ owner, repo, message: commitMessage(req), tree: newTree.sha, parents: [tip] });
    return { sha: commit.sha, html_url: commit.html_url };
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}
