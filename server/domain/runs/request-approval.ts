import type { Prisma, Tx } from "@/server/db";
import type { WriteBackKind } from "@/server/db/generated/enums";
import { appendRunEvents } from "../events/append";
import { decide } from "../policy/decide";
import { factsFrom } from "../policy/facts";
import { PolicyFactError } from "../policy/facts";
import type { StoredAdmission } from "./admit-attempt";
import { stackSpecOf } from "./admit-attempt";
import type { RunForExecution } from "./claim-attempt";

// A patch artifact becomes a pending ApprovalRequest: the write-back it would cause (push the
// commit to the branch, or update the PR's branch), its target and head SHA, the artifact's
// digest, and a frozen copy of everything the approver needs to judge it (prompt, context
// labels, the stack's tools/MCP/skills/subagents, pool, service accounts, secrets and config
// maps). The change-gate policy says why approval is needed and its decision is linked. The
// approvals gate (approve/reject/execute) works on these rows.

export type PatchArtifact = { id: string; kind: "patch"; name: string; digest: string; sizeBytes: number };

async function contextLabels(tx: Tx, runId: string, bundle: Prisma.JsonValue): Promise<string[]> {
  const assembled = await tx.runEvent.findFirst({
    where: { runId, type: "context_assembled" },
    orderBy: { seq: "desc" },
    select: { payload: true },
  });
  const labels = (assembled?.payload as { labels?: unknown } | null)?.labels;
  if (Array.isArray(labels)) return labels.filter((l): l is string => typeof l === "string");
  const obj = bundle && typeof bundle === "object" && !Array.isArray(bundle) ? bundle : {};
  return Object.entries(obj)
    .filter(([, v]) => v !== null && !(Array.isArray(v) && v.length === 0))
    .map(([k]) => k);
}

export async function requestPatchApproval(
  tx: Tx,
  opts: { run: RunForExecution; attemptId: string; artifact: PatchArtifact; ttlMs: number; now: Date },
) {
  const { run, artifact, now } = opts;
  const action: WriteBackKind = run.pullRequest ? "update_pr_branch" : "push_commits";
  const target = {
    branch: run.pullRequest?.headRef ?? run.headBranch ?? run.repository.defaultBranch,
    ...(run.pullRequest ? { prNumber: run.pullRequest.number } : {}),
    headSha: run.headSha,
  };
  const stack = stackSpecOf(run.stackSnapshot);
  const snapshot = run.stackSnapshot as { name?: string; version?: number } | null;

  let policyDecisionId: string | null = null;
  let reason = "Every write-back waits for a person's approval.";
  try {
    const gate = await decide({
      db: tx,
      kind: "change_gate",
      runId: run.id,
      subject: `write_back:${run.id}:${artifact.id}`,
      facts: factsFrom("system", {
        kind: action,
        approval_mode: stack?.spec.approvalMode ?? "always",
        repository_exempts_kind: run.repository.writeBackExceptions.includes(action),
        is_diagnosis_comment: false,
        bot_comments_allowed: run.repository.botCommentsAllowed,
      }),
    });
    policyDecisionId = gate.id;
    reason =
      gate.decision.value === true
        ? gate.decision.explanation
        : `${gate.decision.explanation} (exempt by rule ${gate.decision.rule ?? "default"}; held for approval until exempt write-backs execute on their own)`;
  } catch (err) {
    // Refused facts are no decision: approval stays required (fail-closed), and the reason says so.
    if (!(err instanceof PolicyFactError)) throw err;
    reason = `The change gate refused its facts (${err.message}); approval is required.`;
  }

  const admission = run.admission as Partial<StoredAdmission> | null;
  const d = admission?.decision;
  const presented = {
    prompt: run.prompt,
    promptHash: run.promptHash,
    contextDigest: run.contextDigest,
    contextLabels: await contextLabels(tx, run.id, run.contextBundle),
    stack: {
      name: snapshot?.name ?? null,
      version: snapshot?.version ?? null,
      digest: run.stackDigest,
      model: stack ? `${stack.spec.modelProvider}/${stack.spec.model}` : null,
      adapter: stack?.spec.adapter.kind ?? null,
      tools: stack?.spec.tools ?? [],
      mcpServers: (stack?.spec.mcpServers ?? []).map((m) => ({ name: m.name, transport: m.transport, target: m.target, secrets: m.secrets, configMaps: m.configMaps, privileged: m.privileged })),
      skills: stack?.spec.skills ?? [],
      subagents: (stack?.spec.subagents ?? []).map((s) => ({ name: s.name, role: s.role })),
      approvalMode: stack?.spec.approvalMode ?? "always",
    },
    runnerPool: d?.pool ? { name: d.pool.name, trustTier: d.pool.trustTier, kind: d.pool.kind } : null,
    runtimeServiceAccount: d?.runtimeServiceAccount?.name ?? null,
    runnerServiceAccount: d?.runnerServiceAccount?.name ?? null,
    secrets: { granted: d?.secretsGranted.map((s) => s.name) ?? [], denied: d?.secretsDenied ?? [] },
    configMaps: { granted: d?.configMapsGranted.map((c) => c.name) ?? [], denied: d?.configMapsDenied ?? [] },
    action,
    target: { repository: run.repository.fullName, ...target },
    artifact: { id: artifact.id, kind: artifact.kind, name: artifact.name, digest: artifact.digest, sizeBytes: artifact.sizeBytes },
    reason,
  };
  const expiresAt = new Date(now.getTime() + opts.ttlMs);
  const approval = await tx.approvalRequest.create({
    data: {
      runId: run.id,
      action,
      targetBranch: target.branch,
      targetPrNumber: run.pullRequest?.number ?? null,
      targetHeadSha: run.headSha,
      artifactId: artifact.id,
      artifactDigest: artifact.digest,
      presented: presented as Prisma.InputJsonValue,
      status: "pending",
      policyDecisionId,
      expiresAt,
      createdAt: now,
    },
  });
  await appendRunEvents({
    db: tx,
    runId: run.id,
    attemptId: opts.attemptId,
    events: [
      { type: "write_back_requested", payload: { approvalId: approval.id, action, target, artifactDigest: artifact.digest } },
      {
        type: "approval_requested",
        payload: { approvalId: approval.id, action, target, artifactId: artifact.id, artifactDigest: artifact.digest, reason, expiresAt: expiresAt.toISOString() },
      },
    ],
  });
  return approval;
}
