import type { Prisma, RunSource, TaskKind } from "@/server/db";
import type { StackSpec } from "@/server/domain/stacks/spec";
import { canonicalJson, digestOf, sha256 } from "@/server/lib/digest";
import { pipelines, type PipelineRef } from "./ci";
import { LOGS } from "./logs";
import type { Admission } from "./pools";
import { pullRequests, repositories, type RepoName } from "./repos";
import { labelDigest, minutesBefore } from "./util";

// The context bundle a run was dispatched with (the spec's fields, with
// redaction status), its digest, and the prompt rendered from the stack's
// template. Built from the seed's own data, like context assembly builds it
// from the database.

export type Actor = { login: string; kind: "user" | "bot" | "system"; userId?: string; role?: string };

export type ContextInput = {
  now: Date;
  /** The repository's clone URL in the local forge (it depends on the data folder). */
  cloneUrl: string;
  repo: RepoName;
  prNumber?: number;
  pipeline?: PipelineRef;
  source: RunSource;
  sourceDetail: string;
  deliveryId?: string;
  ruleName?: string;
  actor: Actor;
  taskKind: TaskKind;
  stack: { name: string; version: number; digest: string; spec: StackSpec };
  admission: Admission | null;
  isFork: boolean;
  headSha: string;
  headBranch: string;
  tag?: string;
  /** Flaky scans: the window and signatures scanned instead of one failed job. */
  scan?: { window: string; signatures: string[] };
};

function ciArtifacts(p: PipelineRef | undefined) {
  if (!p) return [];
  const base = p.url ? `${p.url}/artifacts` : `airlock://pipelines/${p.seed.externalId}/artifacts`;
  const names: [type: string, name: string][] =
    p.seed.workflowName === "Release"
      ? [
          ["image", `ghcr.io/${p.seed.repo}:${p.seed.headBranch.replace(/^v/, "")}`],
          ["helm-chart", `${p.seed.repo.split("/")[1]}-${p.seed.headBranch.replace(/^v/, "")}.tgz`],
          ["npm-package", `sdk-${p.seed.headBranch.replace(/^v/, "")}.tgz`],
          ["sbom", "sbom.spdx.json"],
          ["checksums", "SHA256SUMS"],
        ]
      : p.failingJob?.seed.name === "build-image"
        ? [["buildx-metadata", "metadata.json"]]
        : p.failingJob
          ? [
              ["test-report", "junit.xml"],
              ["coverage", "coverage-summary.json"],
            ]
          : [];
  return names.map(([type, name], i) => ({
    name,
    type,
    url: `${base}/${2_000_000_000 + Number(p.seed.externalId.replace(/\D/g, "")) % 1_000_000 + i}`,
    digest: labelDigest(`${p.seed.externalId}/${name}`),
    retention: p.seed.workflowName === "Release" ? "365 days" : "90 days",
  }));
}

function similarRuns(p: PipelineRef | undefined, now: Date) {
  const sig = p?.failingJob?.signature;
  if (!p || !sig) return [];
  return pipelines
    .filter((o) => o.key !== p.seed.key && o.repo === p.seed.repo && o.failing === p.seed.failing && o.jobs.some((j) => j.failure?.log === p.failingJob?.seed.failure?.log))
    .map((o) => ({ pipelineRunId: o.externalId, sha: o.headSha.slice(0, 7), branch: o.headBranch, at: minutesBefore(now, o.minutesAgo).toISOString() }));
}

export function buildContext(input: ContextInput) {
  const repo = repositories.find((r) => r.fullName === input.repo)!;
  const pr = input.prNumber ? pullRequests.find((p) => p.repo === input.repo && p.number === input.prNumber) : undefined;
  const p = input.pipeline;
  const job = p?.failingJob;
  const log = job?.seed.failure ? LOGS[job.seed.failure.log] : undefined;
  const logLines = log ? log.text.split("\n").length : 0;
  const spec = input.stack.spec;
  const artifacts = ciArtifacts(p);

  const bundle = {
    repository: {
      name: repo.fullName,
      defaultBranch: repo.defaultBranch ?? "main",
      cloneUrl: input.cloneUrl,
      visibility: repo.visibility ?? "private",
      trustTier: repo.trustTier ?? "trusted",
      forge: repo.forge ?? "local",
    },
    ref: {
      branch: input.headBranch,
      sha: input.headSha,
      tag: input.tag ?? null,
      pullRequest: pr ? { head: pr.headRef, base: pr.baseRef, baseSha: pr.baseSha ?? null } : null,
      isFork: input.isFork,
      headRepoFullName: pr?.headRepoFullName ?? null,
      trustTier: input.isFork ? "untrusted" : "trusted",
    },
    source: { kind: input.source, detail: input.sourceDetail, triggerRule: input.ruleName ?? null, deliveryId: input.deliveryId ?? null },
    actor: {
      login: input.actor.login,
      kind: input.actor.kind,
      userId: input.actor.userId ?? null,
      permission: { role: input.actor.role ?? null, decision: "allowed", reason: input.actor.kind === "user" ? `${input.actor.role ?? "member"} on ${repo.fullName}` : "trigger rule on an enabled repository" },
    },
    pullRequest: pr
      ? { number: pr.number, title: pr.title, body: pr.body ?? "", author: pr.author, labels: pr.labels ?? [], changedFiles: pr.changedFiles ?? [], reviewState: pr.reviewState ?? null, mergeable: pr.mergeable ?? null, url: pr.url ?? null }
      : null,
    pipeline: p
      ? { workflowName: p.seed.workflowName, runId: p.seed.externalId, status: "completed", conclusion: p.seed.failing ? "failure" : "success", checkName: p.checkName, url: p.url }
      : null,
    job: job
      ? { id: job.externalId, name: job.seed.name, step: job.seed.step, exitCode: job.seed.failure?.exitCode ?? 0, runnerPool: job.seed.runnerPool, image: job.seed.image, durationMs: job.seed.durationMs }
      : null,
    logs: {
      excerpts: log && job ? [{ job: job.seed.name, step: job.seed.step, startLine: log.startLine, endLine: log.startLine + logLines - 1, text: log.text }] : [],
      redaction: log?.redactions.length ? { status: "redacted", rules: log.redactions } : { status: "clean", rules: [] },
      truncated: false,
      maxLines: 400,
    },
    artifacts,
    failure: job?.seed.failure
      ? {
          signature: job.signature,
          testNames: [...job.seed.failure.tests],
          errorLine: job.seed.failure.errorLine,
          filePaths: pr?.changedFiles ?? [],
          similarRuns: similarRuns(p, input.now),
        }
      : input.scan
        ? { signature: null, testNames: [], errorLine: null, filePaths: [], similarRuns: [], scan: input.scan }
        : null,
    stack: {
      name: input.stack.name,
      version: input.stack.version,
      digest: input.stack.digest,
      model: `${spec.modelProvider}/${spec.model}`,
      adapter: spec.adapter.kind,
      toolProfile: spec.tools,
      mcpServers: spec.mcpServers.map((m) => ({ name: m.name, transport: m.transport, secrets: m.secrets, configMaps: m.configMaps, privileged: m.privileged })),
      skills: spec.skills,
      subagents: spec.subagents.map((s) => ({ name: s.name, role: s.role })),
      approvalMode: spec.approvalMode,
    },
    policy: {
      allowedTools: spec.tools,
      writeBackMode: "approval_required",
      writeBackExceptions: repo.writeBackExceptions ?? [],
      botCommentsAllowed: repo.botCommentsAllowed ?? false,
      approvalMode: spec.approvalMode,
      network: input.isFork ? "egress to the model provider only" : "egress to the forge, the model provider and granted MCP servers",
      secrets: input.isFork ? "no privileged secrets (fork PR)" : "granted secrets only, by task kind",
    },
    identity: input.admission
      ? {
          runnerPool: input.admission.poolName,
          runtimeServiceAccount: input.admission.runtimeServiceAccount,
          runnerServiceAccount: input.admission.runnerServiceAccount,
          nativeRoles: input.isFork ? ["contents:read"] : ["contents:read", "checks:read", "pull_requests:read"],
          secretGrants: input.admission.secretsGranted,
          secretsDenied: input.admission.secretsDenied,
          configMapGrants: input.admission.configMapsGranted,
        }
      : null,
    contextLabels: [] as { label: string; provenance: string; bytes: number }[],
  };

  const labels: { label: string; provenance: string; text: unknown }[] = [];
  if (log && job) labels.push({ label: "failed-log-window", provenance: `${job.seed.name} › ${job.seed.step}, lines ${log.startLine}–${log.startLine + logLines - 1}${log.redactions.length ? ", redacted" : ""}`, text: log.text });
  if (pr) labels.push({ label: "changed-files", provenance: `PR #${pr.number}: ${pr.changedFiles?.length ?? 0} files`, text: pr.changedFiles });
  if (pr) labels.push({ label: "pr-description", provenance: `PR #${pr.number} body by ${pr.author}`, text: pr.body });
  if (bundle.failure && bundle.failure.similarRuns.length > 0) labels.push({ label: "similar-failures", provenance: `${bundle.failure.similarRuns.length} run(s) with signature ${job?.signature}`, text: bundle.failure.similarRuns });
  if (artifacts.length > 0) labels.push({ label: "ci-artifacts", provenance: `${artifacts.length} artifact(s) of run ${p?.seed.externalId}`, text: artifacts });
  if (input.scan) labels.push({ label: "failure-history", provenance: `${input.scan.window} on main, grouped by signature`, text: input.scan });
  labels.push({ label: "repository-policy", provenance: `${repo.fullName} policy`, text: bundle.policy });
  labels.push({ label: "stack-prompt", provenance: `${input.stack.name} v${input.stack.version} template`, text: spec.promptTemplate });
  bundle.contextLabels = labels.map((l) => ({ label: l.label, provenance: l.provenance, bytes: Buffer.byteLength(canonicalJson(l.text) ?? "") }));

  const prompt = renderTemplate(spec.promptTemplate, promptVariables(bundle, input.taskKind));
  const sizeBytes = Buffer.byteLength(canonicalJson(bundle));
  return {
    bundle: bundle as unknown as Prisma.InputJsonObject,
    digest: digestOf(bundle),
    prompt,
    promptHash: `sha256:${sha256(prompt)}`,
    labels: bundle.contextLabels.map((l) => l.label),
    contextLabels: bundle.contextLabels,
    redactions: log?.redactions.reduce((n, r) => n + r.count, 0) ?? 0,
    sizeBytes,
  };
}

/** The parts of a bundle a prompt template can refer to. */
type PromptBundle = {
  repository: { name: string; defaultBranch: string; visibility: string };
  ref: { branch: string; sha: string; tag: string | null };
  pullRequest: { number: number; title: string; changedFiles: string[] } | null;
  pipeline: { checkName: string; workflowName: string; runId: string } | null;
  job: { name: string; step: string; exitCode: number } | null;
  failure: { signature: string | null; testNames: string[] } | null;
  logs: { excerpts: { text: string }[] };
  artifacts: { name: string; type: string; digest: string }[];
};

function promptVariables(b: PromptBundle, taskKind: TaskKind): Record<string, Record<string, string>> {
  const list = (xs: readonly string[] | undefined) => (xs && xs.length > 0 ? xs.join(", ") : "none");
  return {
    repository: { name: b.repository.name, defaultBranch: b.repository.defaultBranch, visibility: b.repository.visibility },
    ref: { branch: b.ref.branch, sha: b.ref.sha, tag: b.ref.tag ?? "none" },
    task: { kind: taskKind.replace("_", " ") },
    pullRequest: {
      number: b.pullRequest ? String(b.pullRequest.number) : "none",
      title: b.pullRequest?.title ?? "none",
      changedFiles: list(b.pullRequest?.changedFiles),
    },
    pipeline: { checkName: b.pipeline?.checkName ?? "none", workflowName: b.pipeline?.workflowName ?? "none", runId: b.pipeline?.runId ?? "none" },
    job: { name: b.job?.name ?? "none", step: b.job?.step ?? "none", exitCode: b.job ? String(b.job.exitCode) : "none" },
    failure: { signature: b.failure?.signature ?? "none", tests: list(b.failure?.testNames) },
    logs: { excerpt: b.logs.excerpts.map((e) => e.text).join("\n") || "(no log excerpt)" },
    artifacts: { list: b.artifacts.map((a) => `- ${a.name} (${a.type}, ${a.digest.slice(0, 19)}…)`).join("\n") || "- none" },
  };
}

/** `{{a.b}}` replaced by the variable's value; unknown variables stay visible. */
export function renderTemplate(template: string, vars: Record<string, Record<string, string>>): string {
  return template.replace(/\{\{\s*([a-zA-Z]+)\.([a-zA-Z]+)\s*\}\}/g, (match, group: string, key: string) => vars[group]?.[key] ?? match);
}
