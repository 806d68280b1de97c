import type { Prisma, PrismaClient } from "@/server/db";
import { loadCurrentPolicy, prepareDecision, storeDecisions } from "@/server/domain/policy/decide";
import { factsFrom } from "@/server/domain/policy/facts";
import { stackSpecOf } from "@/server/domain/runs/admit-attempt";
import { sha256 } from "@/server/lib/digest";
import { pipelines, type PipelineRefs } from "./ci";
import { type Actor, buildContext } from "./context";
import { buildRun } from "./build-run";
import type { BuiltRun } from "./built-run";
import { admit, type PoolIds } from "./pools";
import { localCloneUrl, prKey, type PrIds, type RepoIds } from "./repos";
import type { RunPlan } from "./run-plan";
import { runPlans } from "./run-plans";
import { snapshotOf, type StackIds } from "./stacks";
import { deliveries, type RuleIds } from "./triggers";
import { demoUsers, type DemoUserKey } from "./users";
import { minutesBefore, must, newId, stableUuid } from "./util";

// Dispatch runs with everything hanging off them. A run whose dedupe key
// already exists is skipped (with its attempts, events, artifacts, approvals and
// write-backs), so a second seed adds nothing; new runs go in with one batch of
// createMany statements inside a single transaction.

export type SeedRefs = {
  now: Date;
  dataDir: string;
  users: Record<DemoUserKey, string>;
  repos: RepoIds;
  prs: PrIds;
  pipelines: PipelineRefs;
  stacks: StackIds;
  pools: PoolIds;
  rules: RuleIds;
};

const short = (s: string) => sha256(s).slice(0, 12);

/** The dedupe key trigger evaluation would compute for the plan (see the CI spec's trigger contracts). */
export function dedupeKeyOf(plan: RunPlan, refs: SeedRefs, keys: Map<string, string>): string {
  const p = plan.pipeline ? refs.pipelines.get(plan.pipeline) : undefined;
  const sha = plan.headSha ?? p?.seed.headSha ?? "";
  const subject = plan.pr ? `pr/${plan.pr}` : (plan.headBranch ?? p?.seed.headBranch ?? "-");
  const job = p?.failingJob;
  switch (plan.source) {
    case "failed_check":
      return ["failed_check", plan.repo, subject, sha, job?.seed.name ?? "-", job?.seed.step ?? "-", job?.signature ?? "-", plan.rule ?? "-"].join(":");
    case "check_rerun":
      return ["check_rerun", plan.repo, `run/${short(must(keys.get(must(plan.parent, "parent")), "parent key"))}`, sha, p?.checkName ?? "-"].join(":");
    case "release":
      return ["release", plan.repo, plan.tag ?? "-", sha, short(pipelines.find((x) => x.key === plan.pipeline)?.externalId ?? "")].join(":");
    case "flaky_scan":
      // Never derived from the clock: a later seed must compute the same key.
      return ["flaky_scan", plan.repo, short((plan.scan?.signatures ?? []).join(",")), `scan/${short(plan.key)}`].join(":");
    case "pr_comment":
    case "label":
      return [plan.source, plan.repo, subject, sha, plan.delivery ?? plan.key, plan.rule ?? "-"].join(":");
    default:
      return [plan.source, plan.repo, subject, sha, plan.taskKind, `req-${short(plan.key)}`].join(":");
  }
}

function actorOf(plan: RunPlan, refs: SeedRefs): Actor {
  if ("user" in plan.actor) {
    const u = demoUsers[plan.actor.user];
    return { login: u.login, kind: "user", userId: refs.users[plan.actor.user], role: plan.actor.user === "viewer" ? "viewer" : plan.actor.user };
  }
  return { login: plan.actor.login, kind: plan.actor.kind };
}

export async function seedRuns(db: PrismaClient, refs: SeedRefs): Promise<{ created: number; skipped: number }> {
  const plans = runPlans(refs.now).sort((a, b) => b.ageMin - a.ageMin);
  const keys = new Map<string, string>();
  for (const plan of plans) {
    const key = dedupeKeyOf(plan, refs, keys);
    if ([...keys.values()].includes(key)) throw new Error(`seed: duplicate dedupe key ${key}`);
    keys.set(plan.key, key);
  }
  const existing = await db.agentDispatchRun.findMany({ where: { dedupeKey: { in: [...keys.values()] } }, select: { id: true, dedupeKey: true } });
  const idByKey = new Map(existing.map((r) => [r.dedupeKey, r.id]));
  const runIds = new Map<string, string>(); // plan key -> run id
  for (const plan of plans) {
    const id = idByKey.get(keys.get(plan.key)!);
    if (id) runIds.set(plan.key, id);
  }
  const deliveryIds = new Map(deliveries.map((d) => [d.label, stableUuid(d.label)]));

  const built: BuiltRun[] = [];
  for (const plan of plans) {
    if (runIds.has(plan.key)) continue;
    const runId = newId();
    runIds.set(plan.key, runId);
    const dedupeKey = keys.get(plan.key)!;
    const pipeline = plan.pipeline ? must(refs.pipelines.get(plan.pipeline), `pipeline ${plan.pipeline}`) : undefined;
    const stack = refs.stacks[plan.stack];
    const snapshot = snapshotOf(stack, plan.stackVersion ?? stack.version);
    const headSha = must(plan.headSha ?? pipeline?.seed.headSha, `head SHA of ${plan.key}`);
    const headBranch = plan.headBranch ?? pipeline?.seed.headBranch ?? null;
    const parentRunId = plan.parent ? must(runIds.get(plan.parent), `parent ${plan.parent} of ${plan.key} (parents must be older)`) : null;
    const createdAt = minutesBefore(refs.now, plan.ageMin);
    const ruleId = plan.rule ? refs.rules[plan.rule].id : null;
    // Admission happened if an attempt ever left the queue; its identity goes into the bundle.
    const admitted = plan.attempts.some((a) => !(a.outcome === "cancelled" && !a.beats));
    const spec = snapshot.spec;
    const requested = spec.adapter.kind === "command" ? [...spec.adapter.env, ...spec.mcpServers.flatMap((m) => m.secrets)] : [];
    const admission = admitted && plan.pool ? admit({ stack: plan.stack, requested, taskKind: plan.taskKind, pool: plan.pool, isFork: plan.isFork ?? false }) : null;
    const context = buildContext({
      now: refs.now,
      repo: plan.repo,
      cloneUrl: localCloneUrl(refs.dataDir, plan.repo),
      prNumber: plan.pr,
      pipeline,
      source: plan.source,
      sourceDetail: plan.sourceDetail,
      deliveryId: plan.delivery ? deliveryIds.get(plan.delivery) : undefined,
      ruleName: plan.rule,
      actor: actorOf(plan, refs),
      taskKind: plan.taskKind,
      stack: { name: stack.name, version: snapshot.snapshot.version, digest: snapshot.digest, spec: snapshot.spec },
      admission,
      isFork: plan.isFork ?? false,
      headSha,
      headBranch: headBranch ?? "-",
      tag: plan.tag,
      scan: plan.scan,
    });
    built.push(
      buildRun({
        plan,
        runId,
        parentRunId,
        createdAt,
        now: refs.now,
        dedupeKey,
        context,
        snapshot,
        admission,
        ids: { users: refs.users, pools: refs.pools, ruleId, deliveryIds },
        base: {
          repositoryId: refs.repos[plan.repo],
          pullRequestId: plan.pr ? (refs.prs.get(prKey(plan.repo, plan.pr)) ?? null) : null,
          pipelineId: pipeline?.id ?? null,
          jobId: pipeline?.failingJob?.id ?? null,
          triggerRuleId: ruleId,
          headSha,
          headBranch,
          stackId: stack.id,
          stackVersion: snapshot.snapshot.version,
          stackSnapshot: snapshot.snapshot,
          stackDigest: snapshot.digest,
          contextBundle: context.bundle,
          contextDigest: context.digest,
          prompt: context.prompt,
          promptHash: context.promptHash,
          dedupeKey,
        },
      }),
    );
  }

  if (built.length > 0) {
    await db.$transaction([
      db.agentDispatchRun.createMany({ data: built.map((b) => b.run) }),
      db.dispatchAttempt.createMany({ data: built.flatMap((b) => b.attempts) }),
      db.artifact.createMany({ data: built.flatMap((b) => b.artifacts) }),
      db.approvalRequest.createMany({ data: built.flatMap((b) => b.approvals) }),
      db.writeBack.createMany({ data: built.flatMap((b) => b.writeBacks) }),
      db.runEvent.createMany({ data: built.flatMap((b) => b.events) }),
      db.triggerDrop.createMany({ data: built.flatMap((b) => b.drops) }),
      db.auditEntry.createMany({ data: built.flatMap((b) => b.audit.map((a) => ({ ...a, repositoryId: b.run.repositoryId }))) }),
    ]);
  }

  await storeGateDecisions(db, built);

  // Pipelines a run asked for (check reruns after an approved push) point back at it.
  for (const p of pipelines) {
    if (!p.triggeredBy) continue;
    const ref = refs.pipelines.get(p.key);
    const runId = runIds.get(p.triggeredBy);
    if (ref && runId) await db.pipeline.updateMany({ where: { id: ref.id, triggeredByRunId: null }, data: { triggeredByRunId: runId } });
  }
  return { created: built.length, skipped: plans.length - built.length };
}

/**
 * Every seeded approval request carries the change gate's stored decision, as a live request
 * does (request-write-back.ts asks decide() with the same facts): the approval screen shows its
 * proof instead of saying no rule decided.
 */
async function storeGateDecisions(db: PrismaClient, built: BuiltRun[]): Promise<void> {
  const approvals = built.flatMap((b) => b.approvals.map((a) => ({ a, b })));
  if (approvals.length === 0) return;
  const policy = await loadCurrentPolicy(db, "change_gate");
  const repos = await db.repository.findMany({ select: { id: true, writeBackExceptions: true, botCommentsAllowed: true } });
  const items = approvals.map(({ a, b }) => {
    const repo = must(repos.find((r) => r.id === b.run.repositoryId), "repository of a seeded approval");
    const artifact = b.artifacts.find((x) => x.id === a.artifactId);
    const facts = factsFrom("system", {
      kind: a.action,
      approval_mode: stackSpecOf(b.run.stackSnapshot as Prisma.JsonValue)?.spec.approvalMode ?? "always",
      repository_exempts_kind: repo.writeBackExceptions.includes(a.action),
      is_diagnosis_comment: a.action === "comment" && artifact?.kind === "diagnosis",
      bot_comments_allowed: repo.botCommentsAllowed,
    });
    return { prepared: prepareDecision(policy, facts), runId: b.run.id, subject: `write_back:${b.run.id}:${a.action}:${a.artifactId ?? a.targetPrNumber ?? a.targetCheck ?? "run"}` };
  });
  const stored = await storeDecisions(db, items);
  await db.$transaction(approvals.map(({ a }, i) => db.approvalRequest.update({ where: { id: a.id }, data: { policyDecisionId: stored[i]!.id } })));
}
