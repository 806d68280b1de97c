import { z } from "zod";
import type { Db } from "@/server/db";
import { stackSpecOf } from "../runs/admit-attempt";

// The demo's story for a newcomer: each scene the console can show, found among the runs,
// approvals, loops and decisions the reader may see (never made up: a scene with nothing behind
// it says so). Each link goes to a page that exists. "How" says who did the work: the scripted
// demo agent (replayed, labelled as such), or recorded history of a Claude Code stack.

const zLink = z.object({ label: z.string().max(200), href: z.string().max(300) });
export const zStoryScene = z.object({
  key: z.enum(["loop", "fork", "escalation", "attribution", "flaky", "privileged", "cost_cap"]),
  title: z.string().max(200),
  summary: z.string().max(500),
  /** Who did the work shown: null when the scene is absent. */
  how: z.string().max(200).nullable(),
  links: z.array(zLink).max(8),
});
export const zStory = z.object({ scenes: z.array(zStoryScene) });
export type StoryScene = z.infer<typeof zStoryScene>;
export type Story = z.infer<typeof zStory>;

const runHref = (id: string) => `/runs/${encodeURIComponent(id)}`;
const approvalHref = (id: string) => `/approvals/${encodeURIComponent(id)}`;

type RunRef = { id: string; number: number; stackSnapshot: unknown };

function howOf(run: RunRef | null | undefined): string | null {
  if (!run) return null;
  const adapter = stackSpecOf(run.stackSnapshot as never)?.spec.adapter.kind;
  if (adapter === "scripted") return "scripted demo agent (a replayed recording), on the local forge";
  if (adapter === "claude-code") return "Claude Code adapter";
  return "recorded history (a Claude Code stack: runs live only with an API key)";
}

const runSelect = { id: true, number: true, stackSnapshot: true, title: true } as const;

/** `repositoryIds`: what the reader may see ("all" for a global admin). */
export async function demoStory(opts: { db: Db; repositoryIds: string[] | "all" }): Promise<Story> {
  const { db } = opts;
  const visible = opts.repositoryIds === "all" ? {} : { repositoryId: { in: opts.repositoryIds } };
  const scenes: StoryScene[] = [];

  // 1. The whole loop: a red check of the local CI, its scripted run, the patch at the gate, the
  //    push and the rerun that goes green.
  const loop = await db.agentDispatchRun.findFirst({
    where: { ...visible, source: "failed_check", repository: { forge: "local", checkCommand: { not: null } }, artifacts: { some: { kind: "patch" } } },
    orderBy: { createdAt: "desc" },
    select: { ...runSelect, approvals: { where: { action: { in: ["push_commits", "update_pr_branch"] } }, orderBy: { createdAt: "desc" }, take: 1, select: { id: true, status: true } }, rerunPipelines: { select: { conclusion: true }, take: 1 } },
  });
  const push = loop?.approvals[0];
  scenes.push({
    key: "loop",
    title: "A red check, end to end",
    summary: loop
      ? `The local CI's failed check suggested run #${loop.number}; dispatched, it streamed its transcript live and left a patch. ${push?.status === "pending" ? "Approve the push: the local CI reruns the check and it goes green." : push ? `Its push is ${push.status}${loop.rerunPipelines[0]?.conclusion ? `; the rerun ended ${loop.rerunPipelines[0].conclusion}` : ""}.` : ""}`
      : "No run on a local repository with a check command yet: the demo bootstrap starts one when the worker starts.",
    how: howOf(loop),
    links: loop ? [{ label: `Run #${loop.number}: transcript and patch`, href: runHref(loop.id) }, ...(push ? [{ label: push.status === "pending" ? "Approve the push" : "The push approval", href: approvalHref(push.id) }] : [])] : [],
  });

  // 2. A fork PR forced onto the untrusted pool.
  const fork = await db.agentDispatchRun.findFirst({
    where: { ...visible, isFork: true, runnerPoolId: { not: null } },
    orderBy: { createdAt: "desc" },
    select: { ...runSelect, runnerPoolId: true },
  });
  const forkPool = fork?.runnerPoolId ? await db.runnerPool.findUnique({ where: { id: fork.runnerPoolId }, select: { name: true, trustTier: true } }) : null;
  scenes.push({
    key: "fork",
    title: "A fork PR on the untrusted pool",
    summary: fork
      ? `Run #${fork.number} works on a fork's code: policy placed it on ${forkPool?.name ?? "a pool"} (${forkPool?.trustTier ?? "untrusted"}), with an unprivileged account and no privileged secrets. Its admission proof says why.`
      : "No fork PR run yet.",
    how: howOf(fork),
    links: fork ? [{ label: `Run #${fork.number}: pool and proof`, href: runHref(fork.id) }] : [],
  });

  // 3. Rejected patches, fix runs, and the escalation at the bound (label flip, notification).
  const loopState = await db.fixLoopState.findFirst({ where: { ...visible, escalatedAt: { not: null } }, orderBy: { escalatedAt: "desc" } });
  const intents = loopState
    ? await db.fixSpawnIntent.findMany({ where: { repositoryId: loopState.repositoryId, branch: loopState.branch }, orderBy: { createdAt: "asc" }, select: { kind: true, runId: true, parentRunId: true } })
    : [];
  const author = intents.find((i) => i.kind === "escalate")?.parentRunId ?? null;
  const authorRun = author ? await db.agentDispatchRun.findUnique({ where: { id: author }, select: runSelect }) : null;
  const firstRejected = intents.find((i) => i.kind === "fix")?.parentRunId ?? null;
  const firstRun = firstRejected ? await db.agentDispatchRun.findUnique({ where: { id: firstRejected }, select: runSelect }) : null;
  const flip = author ? await db.approvalRequest.findFirst({ where: { runId: author, action: "set_labels" }, orderBy: { createdAt: "desc" }, select: { id: true, status: true } }) : null;
  const fixes = intents.filter((i) => i.kind === "fix").length;
  scenes.push({
    key: "escalation",
    title: "A rejected patch, fix runs, then a person",
    summary: loopState
      ? `On ${loopState.branch}, each rejection started a fix run carrying the reason (${fixes} in all); at the bound the loop stopped, posted its digest for approval, asked to flip the labels and sent a notification.`
      : "No fix-forward loop has reached its bound yet.",
    how: howOf(authorRun),
    links: [
      ...(firstRun ? [{ label: `Run #${firstRun.number}: the first rejected patch`, href: runHref(firstRun.id) }] : []),
      ...(authorRun ? [{ label: `Run #${authorRun.number}: the loop and its digest`, href: runHref(authorRun.id) }] : []),
      ...(flip ? [{ label: flip.status === "pending" ? "Approve the label flip" : "The label flip", href: approvalHref(flip.id) }] : []),
      ...(loopState ? [{ label: "Notifications", href: "/notifications" }] : []),
    ],
  });

  // 4. Attribution of red checks: ours and pre-existing.
  // One query per value: a live worker makes many more attribution decisions than these two, and
  // "the newest 50" would lose the seeded ones behind them.
  const kinds = ["ours", "pre_existing"] as const;
  const found = (
    await Promise.all(
      kinds.map((k) =>
        db.policyDecision.findFirst({
          where: { run: visible, value: { equals: k }, policyVersion: { policy: { kind: "attribution" } } },
          orderBy: { createdAt: "desc" },
          select: { value: true, subject: true, run: { select: runSelect } },
        }),
      ),
    )
  ).flatMap((a) => (a?.run ? [{ ...a, run: a.run }] : []));
  scenes.push({
    key: "attribution",
    title: "Whose red check is it?",
    summary:
      found.length > 0
        ? `Attribution, decided by rules from the CI seen before each agent pass: ${found.map((a) => `${a.subject.split("|")[1]} is ${a.value === "ours" ? "ours (our edits are in range)" : "pre-existing (red before our edits)"}`).join("; ")}.`
        : "No red check on a branch with agent activity has been attributed yet.",
    how: howOf(found[0]?.run),
    links: found.map((a) => ({ label: `${a.value === "ours" ? "Ours" : "Pre-existing"}: run #${a.run.number}`, href: runHref(a.run.id) })),
  });

  // 5. A flaky test: triage reran it once, it failed the same way, and triage escalated it.
  const rerun = await db.triageDecision.findFirst({
    where: { ...visible, action: "rerun_check" },
    orderBy: { createdAt: "desc" },
    select: { repositoryId: true, headSha: true, createdAt: true, pipeline: { select: { headBranch: true, checkName: true } } },
  });
  const after = rerun
    ? await db.triageDecision.findFirst({
        where: { repositoryId: rerun.repositoryId, headSha: rerun.headSha, createdAt: { gt: rerun.createdAt }, disposition: "escalate_to_owner" },
        orderBy: { createdAt: "asc" },
        select: { runId: true, actionDetail: true },
      })
    : null;
  const afterRun = after?.runId ? await db.agentDispatchRun.findUnique({ where: { id: after.runId }, select: runSelect }) : null;
  const where = rerun ? `${rerun.pipeline.checkName} on ${rerun.pipeline.headBranch ?? rerun.headSha.slice(0, 12)}` : "";
  scenes.push({
    key: "flaky",
    title: "A flaky test: rerun once, then a person",
    summary: !rerun
      ? "No failure has been read as flaky yet: the demo bootstrap runs one when the worker starts."
      : after
        ? `${where} failed where it had passed before, so triage reran it once; it failed the same way and triage escalated it to the owners with a notification.`
        : `${where} failed where it had passed before, so triage is rerunning it once (the local CI).`,
    how: rerun ? "the local CI and the CI-triage policy, on the local forge" : null,
    links: [...(afterRun ? [{ label: `Run #${afterRun.number}: the triage decisions`, href: runHref(afterRun.id) }] : []), ...(after ? [{ label: "Notifications", href: "/notifications" }] : [])],
  });

  // 6. A privileged capability waiting for a person before the attempt launches.
  const privileged = await db.approvalRequest.findFirst({
    where: { action: "privileged_capability", run: visible },
    orderBy: [{ createdAt: "desc" }],
    select: { id: true, status: true, run: { select: runSelect } },
  });
  scenes.push({
    key: "privileged",
    title: "A privileged capability, approved first",
    summary: privileged
      ? `Run #${privileged.run.number} would launch with a privileged secret, MCP server or open network: it waited for a person to approve exactly that (${privileged.status}).`
      : "No attempt has asked for one yet: an attempt does when it would launch with a privileged secret, a privileged MCP server or open network, and it waits for a person's approval of exactly that.",
    how: howOf(privileged?.run),
    links: privileged ? [{ label: privileged.status === "pending" ? "Review the launch" : "The launch approval", href: approvalHref(privileged.id) }, { label: `Run #${privileged.run.number}`, href: runHref(privileged.run.id) }] : [],
  });

  // 7. A session stopped at its cost cap.
  const capped = await db.dispatchAttempt.findFirst({
    where: { run: visible, status: "failed", exitReason: { contains: "cost cap", mode: "insensitive" } },
    orderBy: { queuedAt: "desc" },
    select: { exitReason: true, run: { select: runSelect } },
  });
  scenes.push({
    key: "cost_cap",
    title: "A run stopped at its cost cap",
    summary: capped ? `Run #${capped.run.number}: ${capped.exitReason}` : "No session has reached its stack's cost cap yet.",
    how: howOf(capped?.run),
    links: capped ? [{ label: `Run #${capped.run.number}`, href: runHref(capped.run.id) }] : [],
  });

  return { scenes };
}
