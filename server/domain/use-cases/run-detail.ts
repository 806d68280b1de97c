import type { Db, Prisma, RepoRole } from "@/server/db";
import { AppError } from "@/server/errors";
import { pushProtectionRefusal } from "../approvals/push-protection";
import { findingsOf } from "../runs/artifact-content";
import { twoPersonRefusal } from "../runs/causers";
import { runControls } from "../runs/controls";
import { isTerminalRun } from "../runs/lifecycle";
import { admissionView, contextView, stackView } from "../runs/view-model";
import { maxBlockedShown, sandboxViews } from "@/server/execution/sandbox/report";
import { diagnosisCommentControl } from "../writebacks/diagnosis-comment";
import { reviewControl } from "../writebacks/review";
import { rerunControl } from "../writebacks/rerun";
import { openPrControl } from "../writebacks/open-pr";
import { publishReleaseControl } from "../writebacks/publish-release";

export { listRunEvents, searchRunEvents } from "../runs/transcript";

// The read model behind /runs/<id>: everything the page shows on first paint,
// with the stored JSON documents read into views and the controls' verdicts
// for this viewer. Transcript events are paged separately (newest window first).

const runDetailInclude = {
  repository: { select: { id: true, fullName: true, forge: true, defaultBranch: true, cloneUrl: true } },
  pullRequest: true,
  pipeline: true,
  job: true,
  triggerRule: { select: { id: true, name: true, kind: true, action: true } },
  parentRun: { select: { id: true, number: true, title: true } },
  childRuns: { select: { id: true, number: true, title: true, status: true }, orderBy: { createdAt: "asc" } },
  attempts: { orderBy: { number: "asc" }, include: { runnerPool: { select: { id: true, name: true, trustTier: true, kind: true } } } },
  artifacts: {
    orderBy: { createdAt: "asc" },
    select: { id: true, kind: true, name: true, digest: true, sizeBytes: true, mediaType: true, createdAt: true, attemptId: true, retainUntil: true },
  },
  approvals: {
    orderBy: { createdAt: "asc" },
    include: { decidedBy: { select: { id: true, name: true, email: true } }, artifact: { select: { kind: true, secretFindings: true } } },
  },
  writeBacks: { orderBy: { createdAt: "asc" } },
  // Checks rerun because of this run's write-backs (the local forge reruns after a push).
  rerunPipelines: { orderBy: { createdAt: "asc" }, select: { id: true, checkName: true, externalId: true, status: true, conclusion: true, headSha: true, url: true } },
  decisions: { orderBy: { createdAt: "asc" }, select: { id: true, subject: true, property: true, value: true, ruleName: true, createdAt: true } },
} satisfies Prisma.AgentDispatchRunInclude;

export async function getRunDetail(opts: { db: Db; runId: string; viewerRole: RepoRole; viewerId?: string }) {
  const run = await opts.db.agentDispatchRun.findUnique({ where: { id: opts.runId }, include: { ...runDetailInclude, repository: { select: { ...runDetailInclude.repository.select, twoPersonRule: true } } } });
  if (!run) throw new AppError("NOT_FOUND", "No such run.");
  const [dropped, droppedTriggers, runnerPool, twoPerson, sandboxEnds, sandboxBlocked, diagnosisComment, review, rerun, openPr, publishRelease] = await Promise.all([
    opts.db.triggerDrop.count({ where: { runId: run.id, dedupeKey: run.dedupeKey } }),
    listDroppedTriggers(opts.db, run),
    run.runnerPoolId
      ? opts.db.runnerPool.findUnique({
          where: { id: run.runnerPoolId },
          select: { id: true, name: true, trustTier: true, kind: true, runtimeServiceAccount: { select: { name: true } }, runnerServiceAccount: { select: { name: true } } },
        })
      : null,
    opts.viewerId ? twoPersonRefusal(opts.db, { run, twoPersonRule: run.repository.twoPersonRule, userId: opts.viewerId }) : null,
    // Each attempt's sandbox: what it enforced, what it refused (bounded), how it ended.
    opts.db.runEvent.findMany({
      where: { runId: run.id, type: "sandbox", NOT: { payload: { path: ["phase"], equals: "blocked" } } },
      orderBy: { seq: "asc" },
      select: { attemptId: true, payload: true },
    }),
    opts.db.runEvent.findMany({
      where: { runId: run.id, type: "sandbox", payload: { path: ["phase"], equals: "blocked" } },
      orderBy: { seq: "desc" },
      take: maxBlockedShown,
      select: { attemptId: true, payload: true },
    }),
    diagnosisCommentControl(opts.db, { run, role: opts.viewerRole }),
    reviewControl(opts.db, { run, role: opts.viewerRole }),
    rerunControl(opts.db, { runId: run.id, role: opts.viewerRole }),
    openPrControl(opts.db, { run, role: opts.viewerRole }),
    publishReleaseControl(opts.db, { run, role: opts.viewerRole }),
  ]);
  const sandbox = sandboxViews([...sandboxEnds, ...sandboxBlocked.reverse()]);
  const { costUsd, attempts, contextBundle, stackSnapshot, admission, approvals, ...rest } = run;
  const stack = stackView(stackSnapshot);
  return {
    ...rest,
    costUsd: Number(costUsd),
    // Each request's own refusal, as the approval screen shows it: a patch with secrets cannot be
    // approved here until an admin overrides push protection there (the server refuses it anyway).
    approvals: approvals.map(({ artifact, pushProtectionOverride, ...a }) => ({ ...a, approveRefusal: pushProtectionRefusal({ artifact, pushProtectionOverride }) })),
    attempts: attempts.map(({ costUsd: c, ...a }) => ({ ...a, costUsd: Number(c), sandbox: sandbox[a.id] ?? null })),
    duplicateTriggersDropped: dropped,
    droppedTriggers,
    runnerPool,
    context: contextView(contextBundle),
    stack,
    admission: admissionView(admission),
    viewerRole: opts.viewerRole,
    /** "Post diagnosis as a comment": offered to a maintainer of a succeeded diagnosis run on a PR not yet asked for. */
    diagnosisComment,
    /** "Post review": offered to a maintainer of a run on a PR with findings, not yet asked for. */
    review,
    /** "Rerun check": offered to a maintainer of a finished run about a check; `step` says whether the failed job alone can be rerun. */
    rerun,
    /** "Open a pull request": offered for a finished run with a patch on a branch that has no PR. */
    openPr,
    /** "Publish release": offered for a finished release review with a readiness report; always approved by a person. */
    publishRelease,
    /** No work in progress: the page's stream ends, and reopens if a retry makes the run live again. */
    terminal: isTerminalRun(run.status),
    controls: runControls({
      status: run.status,
      role: opts.viewerRole,
      attempts: attempts.length,
      maxRetries: stack.spec?.limits.maxRetries,
      pendingApprovals: approvals.filter((a) => a.status === "pending").length,
      approveRefusal: twoPerson?.message ?? null,
    }),
  };
}

const DROPS_SHOWN = 20;

/**
 * Triggers dropped in this run's favour, newest first, each with the delivery that brought it: a
 * duplicate (the same dedupe key: a redelivery, another report of the same failure) or a rule
 * another rule took precedence over (its own key, linked to this run).
 */
async function listDroppedTriggers(db: Db, run: { id: string; dedupeKey: string }) {
  const [rows, total] = await Promise.all([
    db.triggerDrop.findMany({
      where: { runId: run.id },
      orderBy: [{ createdAt: "desc" }, { id: "desc" }],
      take: DROPS_SHOWN,
      select: { id: true, dedupeKey: true, reason: true, deliveryId: true, ruleId: true, createdAt: true },
    }),
    db.triggerDrop.count({ where: { runId: run.id } }),
  ]);
  const ids = [...new Set(rows.flatMap((r) => (r.deliveryId ? [r.deliveryId] : [])))];
  const deliveries = ids.length === 0 ? [] : await db.webhookDelivery.findMany({ where: { deliveryId: { in: ids } }, select: { deliveryId: true, source: true, event: true, action: true, receivedAt: true } });
  const byId = new Map(deliveries.map((d) => [d.deliveryId, d]));
  return {
    total,
    items: rows.map((r) => ({
      id: r.id,
      kind: r.dedupeKey === run.dedupeKey ? ("duplicate" as const) : ("superseded" as const),
      reason: r.reason,
      ruleId: r.ruleId,
      at: r.createdAt,
      deliveryId: r.deliveryId,
      delivery: r.deliveryId ? (byId.get(r.deliveryId) ?? null) : null,
    })),
  };
}

/** The most of an artifact's content one response carries, as JSON (a response stays under 2 MB). */
export const maxArtifactBytes = 1_900_000;

/** `text` cut on a character boundary to at most `bytes` of UTF-8. */
function cutUtf8(text: string, bytes: number): string {
  if (Buffer.byteLength(text) <= bytes) return text;
  return Buffer.from(text).subarray(0, bytes).toString("utf8").replace(/\uFFFD$/, "");
}

/**
 * One artifact with its content, cut so that the content as JSON (escapes
 * included) fits `maxBytes`, with `truncated` set; the database sends at most
 * `maxBytes` characters, never the whole blob.
 */
export async function getRunArtifact(opts: { db: Db; runId: string; artifactId: string; maxBytes?: number }) {
  const maxBytes = opts.maxBytes ?? maxArtifactBytes;
  const [row] = await opts.db.$queryRaw<
    { id: string; kind: string; name: string; mediaType: string; digest: string; sizeBytes: number; location: string | null; createdAt: Date; secretFindings: Prisma.JsonValue; head: string | null; length: number | null }[]
  >`
    SELECT "id", "kind", "name", "mediaType", "digest", "sizeBytes", "location", "createdAt", "secretFindings",
           left("content", ${maxBytes}::int) AS "head", char_length("content") AS "length"
    FROM "Artifact" WHERE "id" = ${opts.artifactId} AND "runId" = ${opts.runId}`;
  if (!row) throw new AppError("NOT_FOUND", "No such artifact on this run.");
  const { head, length, secretFindings, ...meta } = row;
  // What redaction masked in it (a patch's original bytes are withheld: see artifact-content.ts).
  const masked = findingsOf(secretFindings);
  let content = head;
  let truncated = head !== null && length !== null && length > head.length;
  if (content !== null) {
    const raw = cutUtf8(content, maxBytes);
    if (raw !== content) truncated = true;
    content = raw;
    // Escapes (\n, \", \u0001…) grow JSON; shrink by the excess until the encoded content fits.
    for (let json = Buffer.byteLength(JSON.stringify(content)); json > maxBytes; json = Buffer.byteLength(JSON.stringify(content))) {
      content = cutUtf8(content, Buffer.byteLength(content) - (json - maxBytes));
      truncated = true;
    }
  }
  return { ...meta, kind: meta.kind as Prisma.ArtifactGetPayload<object>["kind"], content, truncated, masked };
}
