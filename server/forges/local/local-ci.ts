import { existsSync } from "node:fs";
import { mkdir, mkdtemp, rm, symlink } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import type { Db } from "@/server/db";
import type { CheckConclusion } from "@/server/db/generated/enums";
import { buildLogExcerpt } from "@/server/domain/context/log-excerpt";
import { redactText } from "@/server/domain/context/redaction/redact";
import { cleanText } from "@/server/lib/text-boundary";
import type { FailedCheckEvent } from "@/server/domain/ci-events/ci-event";
import { ingestCiEvent } from "@/server/domain/ingest/delivery/ingest-ci-event";
import { failureSignature } from "@/server/domain/ci-events/failure/failure-signature";
import { refuseIfDisabled } from "@/server/domain/runs/disabled";
import { AppError } from "@/server/errors";
import { launchAgentProcess, type SandboxedProcess } from "@/server/execution/sandbox/launch";
import { defaultSandboxLimits } from "@/server/execution/sandbox/policy";
import { hostView } from "@/server/execution/sandbox/system";
import { placeLocalCommit } from "./commit-origin";
import { bareRepoPath, checkoutAt, resolveRevision } from "./repositories";

// The local CI: runs a repository's check command in a clean checkout (a temporary clone at the
// commit), in the agents' sandbox, records a Pipeline and its Job (bounded, redacted log excerpt, exit code, duration,
// failure signature), and feeds a failure into the same trigger path as a GitHub webhook
// (ingestCiEvent -> delivery.evaluate -> trigger rules -> runs).

export const LOCAL_CI_WORKFLOW = "local-ci";
export const LOCAL_CI_JOB = "test";
const maxLogChars = 4 * 1024 * 1024;

export type LocalCheckResult = {
  pipelineId: string;
  jobId: string;
  externalId: string;
  conclusion: CheckConclusion;
  exitCode: number | null;
  durationMs: number;
  failureSignature: string | null;
  /** The trigger path's answer for a failure (accepted, duplicate...); null on success. */
  delivery: { status: string; deliveryId: string } | null;
};

export type LocalCheckOptions = {
  db: Db;
  dataDir: string;
  repositoryId: string;
  /** A commit; default: the tip of `branch`. */
  sha?: string;
  /** Default: the repository's default branch. */
  branch?: string;
  triggeredByRunId?: string;
  timeoutMs: number;
  /**
   * The CI image's preinstalled toolchain: a node_modules folder linked into the checkout when
   * it has none, so `npm test` runs without network access.
   */
  toolchainNodeModules?: string | null;
  now?: () => Date;
};

/**
 * Runs `command` through /bin/sh in `cwd`, inside the bubblewrap sandbox agents run in: the
 * checkout's code is the repository's (a fork PR's head included), and `npm test` runs whatever
 * its package.json says. It sees the project read-only without the data folder or .env files,
 * writes only its checkout and HOME, has no network, and holds no secret. Output interleaved
 * and bounded to its last 4 MB.
 */
async function runCheckCommand(command: string, work: { cwd: string; home: string; sessionDir: string; dataDir: string; toolchain: string | null }, timeoutMs: number) {
  const env: Record<string, string> = {
    PATH: [dirname(process.execPath), "/usr/local/bin", "/usr/bin", "/bin"].join(":"),
    HOME: work.home,
    LANG: "C.UTF-8",
    CI: "true",
    NO_COLOR: "1",
    FORCE_COLOR: "0",
    npm_config_update_notifier: "false",
    npm_config_fund: "false",
    npm_config_audit: "false",
  };
  const view = hostView({ projectRoot: process.cwd(), dataDir: work.dataDir });
  let proc: SandboxedProcess;
  try {
    await mkdir(work.sessionDir, { recursive: true });
    proc = await launchAgentProcess({
      kind: "bubblewrap",
      // One pipe for both streams, so the log reads in the order the check wrote it (as GitHub's
      // runner logs do). Two pipes read as data arrives interleave differently from run to run,
      // and the failure context digest, part of the dedupe key, would differ for one failure.
      argv: ["/bin/sh", "-c", `exec 2>&1\n${command}`],
      // A clean environment: nothing of the server's (DATABASE_URL, secrets) reaches the check.
      env,
      cwd: work.cwd,
      writablePaths: [work.cwd, work.home],
      readOnlyPaths: [...view.readOnlyPaths, ...(work.toolchain ? [work.toolchain] : [])],
      hiddenPaths: view.hiddenPaths,
      network: { mode: "none", allowedHosts: [] },
      limits: defaultSandboxLimits,
      // vitest, jest and the like reserve WebAssembly memory per worker: virtual, not used.
      addressSpaceMb: 256 * 1024,
      sessionDir: work.sessionDir,
      stateDir: join(work.dataDir, "sandboxes"),
    });
  } catch (err) {
    return { exitCode: 127, log: `Local CI could not start the check in its sandbox: ${(err as Error).message}`, timedOut: false };
  }
  let log = "";
  const take = (chunk: Buffer) => {
    log += chunk.toString("utf8");
    if (log.length > maxLogChars * 2) log = log.slice(log.length - maxLogChars);
  };
  proc.stdout.on("data", take);
  proc.stderr.on("data", take);
  proc.stdin.end();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    proc.signal("SIGKILL");
  }, timeoutMs);
  const { code, signal } = await proc.closed;
  clearTimeout(timer);
  // Nothing the check started outlives it; a limit that ended it is said in the log.
  const ended = await proc.finish(signal).catch(() => null);
  const tail = log.length > maxLogChars ? log.slice(log.length - maxLogChars) : log;
  return { exitCode: code, log: `${tail}${ended?.reason ? `\nLocal CI: ${ended.reason}` : ""}`, timedOut };
}

async function nextExternalId(db: Db, repositoryId: string): Promise<string> {
  const count = await db.pipeline.count({ where: { repositoryId, workflowName: LOCAL_CI_WORKFLOW } });
  return `${LOCAL_CI_WORKFLOW}-${count + 1}-${Date.now().toString(36)}`;
}

export async function runLocalCheck(opts: LocalCheckOptions): Promise<LocalCheckResult> {
  const now = opts.now ?? (() => new Date());
  const repo = await opts.db.repository.findUnique({ where: { id: opts.repositoryId } });
  if (!repo) throw new AppError("NOT_FOUND", "No such repository.");
  if (repo.forge !== "local") throw new AppError("BAD_REQUEST", `${repo.fullName} is not on the local forge`, { reason: "not_local_forge" });
  if (!repo.checkCommand) throw new AppError("BAD_REQUEST", `${repo.fullName} has no check command configured, so the local CI has nothing to run`, { reason: "no_check_command" });
  refuseIfDisabled(repo, "running its check");
  const repoPath = bareRepoPath(opts.dataDir, repo.fullName);
  const asked = opts.branch ?? repo.defaultBranch;
  const sha = await resolveRevision(repoPath, opts.sha ?? asked);
  if (!sha) throw new AppError("NOT_FOUND", `${opts.sha ?? asked} is not in ${repo.fullName}`, { reason: "unknown_revision" });
  // Where the commit comes from decides trust, not the branch name asked for: a fork's head
  // checked "on main" is still a fork's head.
  const place = await placeLocalCommit({ db: opts.db, repoPath, repositoryId: repo.id, sha, askedBranch: asked });
  const branch = place.headBranch;

  const startedAt = now();
  const externalId = await nextExternalId(opts.db, repo.id);
  const checkName = `${LOCAL_CI_WORKFLOW} / ${LOCAL_CI_JOB}`;
  const pipeline = await opts.db.pipeline.create({
    data: {
      repositoryId: repo.id,
      workflowName: LOCAL_CI_WORKFLOW,
      checkName,
      externalId,
      status: "in_progress",
      headSha: sha,
      headBranch: branch,
      event: opts.triggeredByRunId ? "rerun" : "push",
      triggeredByRunId: opts.triggeredByRunId ?? null,
      startedAt,
    },
  });
  const job = await opts.db.job.create({
    data: { pipelineId: pipeline.id, externalId: `${externalId}-1`, name: LOCAL_CI_JOB, step: repo.checkCommand, status: "in_progress", runnerPool: "local-ci" },
  });

  const work = await mkdtemp(join(tmpdir(), "airlock-ci-"));
  let run: { exitCode: number | null; log: string; timedOut: boolean };
  try {
    const checkout = join(work, "checkout");
    await mkdir(join(work, "home"));
    await checkoutAt(repoPath, sha, checkout);
    const toolchain = opts.toolchainNodeModules;
    if (toolchain && existsSync(toolchain) && !existsSync(join(checkout, "node_modules"))) {
      await symlink(toolchain, join(checkout, "node_modules"), "dir");
    }
    run = await runCheckCommand(
      repo.checkCommand,
      { cwd: checkout, home: join(work, "home"), sessionDir: join(work, "session"), dataDir: opts.dataDir, toolchain: toolchain && existsSync(toolchain) ? toolchain : null },
      opts.timeoutMs,
    );
  } catch (err) {
    run = { exitCode: null, log: `Local CI could not prepare the checkout: ${(err as Error).message}`, timedOut: false };
  } finally {
    await rm(work, { recursive: true, force: true });
  }

  const finishedAt = now();
  const durationMs = finishedAt.getTime() - startedAt.getTime();
  const conclusion: CheckConclusion = run.timedOut ? "timed_out" : run.exitCode === 0 ? "success" : "failure";
  const header = `$ ${repo.checkCommand}\n`;
  const footer = run.timedOut ? `\nLocal CI: stopped after ${opts.timeoutMs} ms` : `\nLocal CI: exit code ${run.exitCode ?? "none"}`;
  // The text boundary first: a check's output may hold NUL bytes or broken UTF-8 like any process's.
  const log = redactText(cleanText(`${header}${run.log}${footer}`)).text;
  const signature = conclusion === "success" ? null : failureSignature(log, { jobName: LOCAL_CI_JOB });
  const excerpt = buildLogExcerpt(log, { focusLine: signature?.firstErrorLine ?? undefined });
  await opts.db.job.update({
    where: { id: job.id },
    data: {
      status: "completed",
      conclusion,
      exitCode: run.exitCode,
      durationMs,
      logExcerpt: excerpt.text,
      logExcerptStartLine: excerpt.startLine,
      failureSignature: signature?.signature ?? null,
      failingTests: signature?.failingTests ?? [],
    },
  });
  await opts.db.pipeline.update({ where: { id: pipeline.id }, data: { status: "completed", conclusion, completedAt: finishedAt } });

  let delivery: LocalCheckResult["delivery"] = null;
  if (conclusion !== "success") {
    const event: FailedCheckEvent = {
      type: "failed_check",
      origin: "local",
      via: "local_ci",
      level: "job",
      repository: { fullName: repo.fullName, cloneUrl: repo.cloneUrl, htmlUrl: null, defaultBranch: repo.defaultBranch, visibility: repo.visibility },
      actor: { login: "local-ci", type: "bot", association: null, airlockRole: null },
      headSha: sha,
      headBranch: branch,
      triggerEvent: opts.triggeredByRunId ? "rerun" : "push",
      pullRequests: place.pullRequests,
      isFork: place.isFork,
      workflowName: LOCAL_CI_WORKFLOW,
      jobName: LOCAL_CI_JOB,
      checkName,
      step: repo.checkCommand,
      runId: externalId,
      jobId: job.externalId,
      runAttempt: 1,
      url: null,
      conclusion,
      startedAt: startedAt.toISOString(),
      completedAt: finishedAt.toISOString(),
      runnerLabels: ["local-ci"],
      runnerName: "local-ci",
    };
    delivery = await ingestCiEvent({ db: opts.db, event, deliveryId: `local-ci-${pipeline.id}`, log, now: finishedAt });
  }
  return { pipelineId: pipeline.id, jobId: job.id, externalId, conclusion, exitCode: run.exitCode, durationMs, failureSignature: signature?.signature ?? null, delivery };
}
