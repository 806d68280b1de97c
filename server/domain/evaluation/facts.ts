// What evaluation knows beyond the payload, read from Airlock's own records: the pull request,
// the pipeline and failed job, the failure signature and context digest, changed files, where the
// code comes from, the Airlock user behind a GitHub account. Reads only; records.ts writes.
import type { Db, Job, Pipeline, PullRequest, Repository } from "@/server/db";
import type { RepoRole } from "@/server/db/generated/enums";
import type { PersonOnRepository } from "@/server/domain/actor";
import type { FailedCheckEvent } from "@/server/domain/ci-events/ci-event";
import { failureContextDigest } from "@/server/domain/ci-events/failure/context-digest";
import { failureSignature, locateFirstError } from "@/server/domain/ci-events/failure/failure-signature";
import type { SimilarRun } from "@/server/domain/context/context-bundle";
import { buildLogExcerpt } from "@/server/domain/context/log-excerpt";
import type { LocalArtifact, LocalExtras } from "@/server/domain/ingest/delivery/local-payload";
import type { DispatchableEvent } from "@/server/domain/ci-events/ci-event";
import type { ReleaseFacts } from "@/server/domain/triggers/release-facts";
import { decideOrigin, type Origin, type OriginEvidence } from "./origin";
import { loadReleaseFacts } from "./release-facts";

export type FailureFacts = { signature: string | null; testNames: string[]; errorLines: string[] };

export type Facts = {
  pullRequest: PullRequest | null;
  pullRequestNumber: number | null;
  headSha: string | null;
  headBranch: string | null;
  /** Where the code comes from; anything but "repository" runs untrusted. */
  origin: Origin;
  /** null: unknown (path-filtered rules then never match). */
  changedFiles: string[] | null;
  pipeline: Pipeline | null;
  job: Job | null;
  failure: FailureFacts | null;
  /** The failed job's full log when the delivery carried one (already redacted at ingest). */
  log: string | null;
  artifacts: LocalArtifact[];
  similarRuns: SimilarRun[];
  /** Failed checks: the dedupe key's context digest (ci-events/failure/context-digest.ts). */
  contextDigest: string | null;
  /** Releases: what the release keys and readiness gaps are decided on (release-facts.ts). */
  release: ReleaseFacts | null;
};

/** The excerpt a failed job's row keeps of a delivery's log (records.ts stores exactly this). */
export const logExcerptOf = (log: string) => buildLogExcerpt(log, { focusLine: locateFirstError(log) });

/** The Airlock user linked to a GitHub account (GitHub sign-in), with their role here. */
const personSelect = (repositoryId: string) => ({ id: true, email: true, isAdmin: true, memberships: { where: { repositoryId }, select: { role: true } } }) as const;
type PersonRow = { id: string; email: string; isAdmin: boolean; memberships: { role: RepoRole }[] };
const personOf = (user: PersonRow): PersonOnRepository => ({ kind: "person", userId: user.id, label: user.email, role: user.isAdmin ? "admin" : (user.memberships[0]?.role ?? null) });

export async function resolveAirlockActor(db: Db, repositoryId: string, githubUserId: number | null): Promise<PersonOnRepository | null> {
  if (githubUserId === null) return null;
  const account = await db.account.findFirst({ where: { providerId: "github", accountId: String(githubUserId) }, select: { user: { select: personSelect(repositoryId) } } });
  return account ? personOf(account.user) : null;
}

/** A manual dispatch's Airlock user with their role now (a removed member asks as nobody). */
export async function resolveAirlockUser(db: Db, repositoryId: string, userId: string): Promise<PersonOnRepository> {
  const user = await db.user.findUnique({ where: { id: userId }, select: personSelect(repositoryId) });
  return user ? personOf(user) : { kind: "person", userId: null, label: userId, role: null };
}

export async function loadFacts(opts: { db: Db; repository: Repository; event: DispatchableEvent; extras: LocalExtras }): Promise<Facts> {
  const { db, repository, event, extras } = opts;
  const evidence: OriginEvidence = { pullRequest: null, pushed: null };
  const facts: Facts = {
    pullRequest: null,
    pullRequestNumber: null,
    headSha: null,
    headBranch: null,
    origin: { kind: "unknown", reason: "not yet decided" },
    changedFiles: extras.changedFiles,
    pipeline: null,
    job: null,
    failure: null,
    log: extras.log,
    artifacts: extras.artifacts,
    similarRuns: [],
    contextDigest: null,
    release: null,
  };
  const prByNumber = (number: number) =>
    db.pullRequest.findUnique({ where: { repositoryId_number: { repositoryId: repository.id, number } } });

  switch (event.type) {
    case "failed_check":
      await failedCheckFacts(db, repository, event, facts, evidence);
      break;
    case "pr_comment":
    case "pr_labeled":
    case "pr_updated":
    case "pr_review": {
      const pr = await prByNumber(event.pullRequest.number);
      const snapshot = "headSha" in event.pullRequest ? event.pullRequest : null;
      facts.pullRequest = pr;
      facts.pullRequestNumber = event.pullRequest.number;
      facts.headSha = snapshot?.headSha ?? pr?.headSha ?? null;
      facts.headBranch = snapshot?.headRef ?? pr?.headRef ?? null;
      const headRef = snapshot?.headRef ?? pr?.headRef;
      if (headRef !== undefined) {
        evidence.pullRequest = {
          number: event.pullRequest.number,
          isFork: snapshot?.isFork ?? pr?.isFork ?? null,
          headRef,
          headRepoFullName: snapshot?.headRepoFullName ?? pr?.headRepoFullName ?? null,
        };
      }
      break;
    }
    case "manual":
    case "check_rerun": {
      const number = event.pullRequestNumber;
      const pr = number === null ? null : await prByNumber(number);
      facts.pullRequest = pr;
      facts.pullRequestNumber = number;
      facts.headSha = event.headSha;
      facts.headBranch = event.headBranch ?? pr?.headRef ?? null;
      if (pr) evidence.pullRequest = pr;
      else if (number === null) {
        // A commit named without its pull request: a fork's open pull request at it still makes it a fork's.
        const forkAtHead = await db.pullRequest.findFirst({ where: { repositoryId: repository.id, headSha: event.headSha, state: "open", isFork: true }, select: { number: true, isFork: true, headRef: true, headRepoFullName: true } });
        if (forkAtHead) evidence.pullRequest = forkAtHead;
      }
      if (event.type === "check_rerun") {
        const original = await db.agentDispatchRun.findFirst({ where: { id: event.originalRunId, repositoryId: repository.id }, select: { number: true, origin: true, isFork: true } });
        evidence.originalRun = original ? { number: original.number, origin: original.isFork ? "fork" : (original.origin ?? "unknown") } : null;
      }
      break;
    }
    case "release": {
      facts.headBranch = event.tag;
      facts.headSha = event.commitSha;
      if (facts.headSha === null) {
        // A release cut from a branch names no commit: the tag's own release pipeline does.
        const built = await db.pipeline.findFirst({
          where: { repositoryId: repository.id, headBranch: event.tag },
          orderBy: { createdAt: "desc" },
          select: { headSha: true },
        });
        facts.headSha = built?.headSha ?? null;
      }
      facts.artifacts = [
        ...extras.artifacts,
        ...event.assets.map((a) => ({ name: a.name, type: a.contentType ?? "asset", url: a.url, digest: a.digest, sizeBytes: a.sizeBytes })),
      ];
      facts.release = await loadReleaseFacts({ repository, event, commitSha: facts.headSha, artifacts: facts.artifacts });
      evidence.releaseBranches = facts.release.branches;
      if (facts.headSha) {
        evidence.pullRequest = await db.pullRequest.findFirst({ where: { repositoryId: repository.id, headSha: facts.headSha, isFork: true }, select: { number: true, isFork: true, headRef: true, headRepoFullName: true } });
      }
      break;
    }
    case "flaky_scan": {
      facts.headBranch = event.branch;
      // A scan names no commit: triage the newest one that failed this way on the branch.
      const latest = await db.job.findFirst({
        where: { failureSignature: event.signature, pipeline: { repositoryId: repository.id, ...(event.branch ? { headBranch: event.branch } : {}) } },
        orderBy: { createdAt: "desc" },
        include: { pipeline: true },
      });
      if (latest) {
        const { pipeline, ...job } = latest;
        facts.headSha = pipeline.headSha;
        facts.pipeline = pipeline;
        facts.job = job;
        facts.failure = failureFromJob(job);
      }
      break;
    }
    case "branch_push":
      facts.headSha = event.headSha;
      facts.headBranch = event.branch;
      break;
  }
  facts.origin = decideOrigin(event, evidence);

  if (facts.changedFiles === null && facts.pullRequest && facts.pullRequest.changedFiles.length > 0) {
    facts.changedFiles = facts.pullRequest.changedFiles;
  }
  // Requests on a pull request ("@agent fix failing check", the label) are about its latest red
  // check at the current head: give the run that job's log and failure.
  if (event.type !== "failed_check" && facts.pullRequest && facts.headSha) {
    const failed = await latestFailedJob(db, facts.pullRequest.id, facts.headSha);
    if (failed) {
      facts.pipeline = failed.pipeline;
      facts.job = failed.job;
      facts.failure = failureFromJob(failed.job);
    }
  }
  if (facts.failure?.signature) facts.similarRuns = await similarRuns(db, repository.id, facts.failure.signature, facts.job?.id ?? null);
  if (event.type === "failed_check") {
    // The stored excerpt when the job has one, else the one this delivery's log will store.
    const stored = facts.job && facts.job.logExcerpt !== "" ? facts.job.logExcerpt : null;
    const logExcerpt = stored ?? (facts.log === null ? null : logExcerptOf(facts.log).text);
    facts.contextDigest = failureContextDigest({ logExcerpt, artifactDigests: facts.artifacts.flatMap((a) => (a.digest ? [a.digest] : [])) });
  }
  return facts;
}

async function failedCheckFacts(db: Db, repository: Repository, event: FailedCheckEvent, facts: Facts, evidence: OriginEvidence) {
  let number = event.pullRequests[0]?.number ?? null;
  // workflow_job payloads and fork check suites name no pull request: the head commit does.
  const pr =
    number !== null
      ? await db.pullRequest.findUnique({ where: { repositoryId_number: { repositoryId: repository.id, number } } })
      : await db.pullRequest.findFirst({
          where: { repositoryId: repository.id, headSha: event.headSha, state: "open" },
          orderBy: { updatedAt: "desc" },
        });
  number ??= pr?.number ?? null;
  facts.pullRequest = pr;
  facts.pullRequestNumber = number;
  facts.headSha = event.headSha;
  facts.headBranch = event.headBranch ?? event.pullRequests[0]?.headRef ?? pr?.headRef ?? null;
  const linked = event.pullRequests[0];
  evidence.pullRequest = pr ?? (linked ? { ...linked } : null);
  if (event.isFork === null && evidence.pullRequest?.isFork == null) {
    evidence.pushed = await db.pushedCommit.findUnique({
      where: { repositoryId_sha: { repositoryId: repository.id, sha: event.headSha } },
      select: { branch: true, pusher: true },
    });
  }
  facts.pipeline = await db.pipeline.findUnique({ where: { repositoryId_externalId: { repositoryId: repository.id, externalId: event.runId } } });
  if (facts.pipeline && event.jobId !== null) {
    facts.job = await db.job.findUnique({ where: { pipelineId_externalId: { pipelineId: facts.pipeline.id, externalId: event.jobId } } });
  }
  if (facts.job?.failureSignature) {
    facts.failure = failureFromJob(facts.job);
  } else if (facts.log !== null) {
    const sig = failureSignature(facts.log, { jobName: event.jobName });
    facts.failure = { signature: sig.signature, testNames: sig.failingTests, errorLines: sig.errorLines };
  }
}

function failureFromJob(job: Job): FailureFacts | null {
  if (!job.failureSignature && job.failingTests.length === 0) return null;
  return { signature: job.failureSignature, testNames: job.failingTests, errorLines: [] };
}

async function latestFailedJob(db: Db, pullRequestId: string, headSha: string) {
  const pipeline = await db.pipeline.findFirst({
    where: { pullRequestId, headSha, conclusion: { in: ["failure", "timed_out", "startup_failure"] } },
    orderBy: { createdAt: "desc" },
    include: { jobs: { where: { conclusion: { in: ["failure", "timed_out", "startup_failure"] } }, orderBy: { createdAt: "asc" }, take: 1 } },
  });
  const job = pipeline?.jobs[0];
  if (!pipeline || !job) return null;
  const { jobs: _jobs, ...rest } = pipeline;
  return { pipeline: rest, job };
}

/** Earlier jobs of this repository that failed the same way (the agent's "seen before" list). */
async function similarRuns(db: Db, repositoryId: string, signature: string, excludeJobId: string | null): Promise<SimilarRun[]> {
  const jobs = await db.job.findMany({
    where: { failureSignature: signature, pipeline: { repositoryId }, ...(excludeJobId ? { id: { not: excludeJobId } } : {}) },
    orderBy: { createdAt: "desc" },
    take: 5,
    select: { createdAt: true, conclusion: true, pipeline: { select: { externalId: true, headSha: true, url: true } } },
  });
  return jobs.map((j) => ({
    runId: j.pipeline.externalId,
    headSha: j.pipeline.headSha,
    signature,
    url: j.pipeline.url,
    at: j.createdAt.toISOString(),
    outcome: j.conclusion,
  }));
}
