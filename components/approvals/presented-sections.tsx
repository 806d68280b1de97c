import { ArtifactBody } from "@/components/runs/artifact-view";
import { Card } from "@/components/ui/card";
import { CopyButton } from "@/components/ui/copy-button";
import type { Presented } from "@/server/domain/approvals/schemas";
import { Field, list } from "./fields";
import { LabelChangeView } from "./label-change";
import { OpenPrView } from "./open-pr";
import { ReleaseView } from "./release";
import { ReleaseGapView } from "./release-gap";
import { RollBackView } from "./roll-back";
import { PostedWords, postsWords } from "./posted-words";
import { PrivilegedLaunchView } from "./privileged-launch";
import { RanWithView } from "./ran-with";
import { RerunPlanView } from "./rerun-plan";
import { targetParts, type TargetRow } from "./target";

// The read-only part of the approval screen: what the request froze for its approver (the
// artifact as what it is, the agent, its grants and context), parsed with zPresented first.

export { Field, list };

const adapterLabel: Record<string, string> = {
  scripted: "scripted demo agent (replays a recorded session, no model)",
  command: "command adapter",
  "claude-code": "Claude Code",
};

/** "name v3 · provider/model · adapter", leaving out what the record does not say (never a "?"). */
export function stackLine(stack: Presented["stack"]): string {
  const name = stack.name ? `${stack.name}${stack.version !== null ? ` v${stack.version}` : ""}` : null;
  const adapter = stack.adapter ? (adapterLabel[stack.adapter] ?? stack.adapter) : null;
  return [name, stack.model, adapter].filter(Boolean).join(" · ") || "not recorded";
}

/** The whole target: "acme/web-console · tag v2.14.0". */
export function targetLine(p: Pick<Presented, "target">, row: TargetRow): string {
  return [p.target.repository, ...targetParts(row)].join(" · ");
}

type ApprovalForSections = {
  action: string;
  presented: unknown;
  targetPrNumber: number | null;
  artifactDigest: string | null;
  artifact: { name: string; kind: string; mediaType: string; content: string | null } | null;
};

export function PresentedSections({ approval: a, presented: p }: { approval: ApprovalForSections; presented: Presented }) {
  return (
    <>
      {p.launch ? (
        <PrivilegedLaunchView launch={p.launch} />
      ) : p.releaseGap ? (
        <ReleaseGapView gap={p.releaseGap} />
      ) : a.action === "publish_release" ? (
        <ReleaseView presented={p} artifact={a.artifact} artifactDigest={a.artifactDigest} headSha={p.target.headSha ?? null} />
      ) : p.rollBack ? (
        <RollBackView rollBack={p.rollBack} message={p.message} artifact={a.artifact} artifactDigest={a.artifactDigest} />
      ) : p.openPr ? (
        <OpenPrView openPr={p.openPr} presented={p} artifact={a.artifact} artifactDigest={a.artifactDigest} />
      ) : postsWords(a.action) ? (
        <PostedWords action={a.action} presented={p} artifactName={a.artifact?.name ?? null} artifactDigest={a.artifactDigest} />
      ) : p.rerun ? (
        <RerunPlanView plan={p.rerun} />
      ) : a.action === "set_labels" ? (
        <section aria-label="Label change" className="space-y-2">
          <h2 className="font-medium">Label change</h2>
          <LabelChangeView presented={a.presented} fallbackPrNumber={a.targetPrNumber} />
        </section>
      ) : (
        <section aria-label="Artifact" className="space-y-2">
          <h2 className="font-medium">Artifact</h2>
          <p className="font-mono text-xs break-all">
            <span data-testid="artifact-digest">
              {a.artifact?.name} {a.artifactDigest}
            </span>
            {a.artifactDigest && <CopyButton value={a.artifactDigest} what="artifact digest" className="ml-0.5 align-middle" />}
          </p>
          {a.artifact?.content ? (
            <ArtifactBody artifact={{ ...a.artifact, content: a.artifact.content }} />
          ) : p.message ? (
            <pre className="text-sm whitespace-pre-wrap">{p.message}</pre>
          ) : (
            <p className="text-sm">No artifact.</p>
          )}
        </section>
      )}

      {p.ranWith && <RanWithView ranWith={p.ranWith} />}

      <Card as="section" padding="sm" aria-label="Agent">
        <dl className="grid gap-3 sm:grid-cols-2">
          <Field label="Stack">{stackLine(p.stack)}</Field>
          <Field label="Stack digest"><span className="font-mono text-xs">{p.stack.digest}</span></Field>
          <Field label="Tools">{list(p.stack.tools)}</Field>
          <Field label="MCP servers">{list(p.stack.mcpServers.map((m) => `${m.name}${m.privileged ? " (privileged)" : ""}`))}</Field>
          <Field label="Skills">{list(p.stack.skills)}</Field>
          <Field label="Subagents">{list(p.stack.subagents.map((s) => `${s.name} (${s.role})`))}</Field>
          <Field label="Runner pool">{p.runnerPool ? `${p.runnerPool.name} (${p.runnerPool.trustTier}, ${p.runnerPool.kind})` : "not admitted"}</Field>
          <Field label="Runtime ServiceAccount">{p.runtimeServiceAccount ?? "—"}</Field>
          <Field label="Runner ServiceAccount">{p.runnerServiceAccount ?? "—"}</Field>
          <Field label="Secrets">{`granted: ${list(p.secrets.granted)}; denied: ${list(p.secrets.denied.map((d) => `${d.name} (${d.reason})`))}`}</Field>
          <Field label="ConfigMaps">{`granted: ${list(p.configMaps.granted)}; denied: ${list(p.configMaps.denied.map((d) => `${d.name} (${d.reason})`))}`}</Field>
          <Field label="Context labels">{list(p.contextLabels)}</Field>
        </dl>
        <h3 className="mt-3 text-xs font-medium text-zinc-600 dark:text-zinc-400">Assembled prompt ({p.promptHash})</h3>
        <pre className="mt-1 max-h-80 overflow-auto rounded bg-zinc-50 p-2 text-xs whitespace-pre-wrap dark:bg-zinc-950">{p.prompt}</pre>
      </Card>
    </>
  );
}
