// Reads what Airlock stored about a failed check that the triage facts are derived from: the
// failed job, earlier failed attempts of the same check at the same head, and commits where
// the same signature failed but the same check also passed.
import type { Db } from "@/server/db";
import type { FailedCheckEvent } from "@/server/domain/ci-events/ci-event";
import { FAILING_CONCLUSIONS } from "@/server/domain/ci-events/ci-event";
import type { TriageHistory } from "./facts";

export type TriageSubject = {
  repositoryId: string;
  pipeline: { id: string; headSha: string; workflowName: string; checkName: string; createdAt: Date };
  job: { id: string; name: string; step: string | null; failureSignature: string | null; failingTests: string[]; createdAt: Date } | null;
};

export async function loadTriageSubject(db: Db, pipelineId: string, jobId: string | null): Promise<TriageSubject | null> {
  const pipeline = await db.pipeline.findUnique({
    where: { id: pipelineId },
    select: { id: true, repositoryId: true, headSha: true, workflowName: true, checkName: true, createdAt: true },
  });
  if (!pipeline) return null;
  // A pipeline-level failure (workflow_run) names no job: take its first failed one, if stored.
  const job = await db.job.findFirst({
    where: jobId ? { id: jobId } : { pipelineId, conclusion: { in: [...FAILING_CONCLUSIONS] } },
    orderBy: { createdAt: "asc" },
    select: { id: true, name: true, step: true, failureSignature: true, failingTests: true, createdAt: true },
  });
  const { repositoryId, ...rest } = pipeline;
  return { repositoryId, pipeline: rest, job };
}

export async function loadTriageHistory(db: Db, subject: TriageSubject, event: FailedCheckEvent): Promise<TriageHistory> {
  const { pipeline, job, repositoryId } = subject;
  const signature = job?.failureSignature ?? null;

  // Earlier failed attempts of this check at this head: earlier pipelines (the local CI makes a
  // new one per run) and, for GitHub's reruns of one workflow run, earlier jobs of the same name.
  const earlierPipelines = await db.job.findMany({
    where: {
      conclusion: { in: [...FAILING_CONCLUSIONS] },
      pipeline: {
        repositoryId,
        headSha: pipeline.headSha,
        workflowName: pipeline.workflowName,
        checkName: pipeline.checkName,
        id: { not: pipeline.id },
        createdAt: { lt: pipeline.createdAt },
      },
      ...(job ? { name: job.name } : {}),
    },
    select: { pipelineId: true, failureSignature: true },
    orderBy: { createdAt: "asc" },
  });
  // One attempt per earlier pipeline (its first failed job of this name).
  const perPipeline = new Map<string, string | null>();
  for (const j of earlierPipelines) if (!perPipeline.has(j.pipelineId)) perPipeline.set(j.pipelineId, j.failureSignature);
  const earlierJobs = job
    ? await db.job.findMany({
        where: { pipelineId: pipeline.id, name: job.name, id: { not: job.id }, createdAt: { lt: job.createdAt }, conclusion: { in: [...FAILING_CONCLUSIONS] } },
        select: { failureSignature: true },
      })
    : [];
  const earlierFailedAttempts = [...[...perPipeline.values()].map((s) => ({ signature: s })), ...earlierJobs.map((j) => ({ signature: j.failureSignature }))];

  const flakyEvidence =
    signature === null
      ? []
      : await db.$queryRaw<{ headSha: string }[]>`
          SELECT DISTINCT p."headSha"
          FROM "Job" j JOIN "Pipeline" p ON p."id" = j."pipelineId"
          WHERE p."repositoryId" = ${repositoryId} AND j."failureSignature" = ${signature}
            AND EXISTS (
              SELECT 1 FROM "Pipeline" s
              WHERE s."repositoryId" = p."repositoryId" AND s."headSha" = p."headSha"
                AND s."workflowName" = p."workflowName" AND s."checkName" = p."checkName"
                AND s."conclusion" = 'success'::"CheckConclusion")
          LIMIT 5`;

  return {
    origin: event.origin,
    names: { jobName: job?.name ?? event.jobName, step: job?.step ?? event.step, checkName: pipeline.checkName, workflowName: pipeline.workflowName },
    failingTests: job?.failingTests ?? [],
    signature,
    runAttempt: event.runAttempt,
    earlierFailedAttempts,
    flakyEvidence,
  };
}
