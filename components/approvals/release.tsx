import { ArtifactBody } from "@/components/runs/artifact-view";
import { Card } from "@/components/ui/card";
import { CopyButton } from "@/components/ui/copy-button";
import { SafeMarkdown } from "@/components/transcript/safe-markdown";
import type { Presented } from "@/server/domain/approvals/schemas";
import { Field } from "./fields";
import { PostedWords } from "./posted-words";

// publish_release on the approval screen. A release names a tag, not a branch, and its artifact is
// what gets published, not a diff to read: the tag and the commit it will point at, the release's
// name and notes byte for byte (PostedWords), the readiness report the approver decides on, and
// the artifact with its digest (checked again at execution: a changed one is stale). A request
// from before these were frozen (the demo's seeded ones) shows its bound artifact as the report.

type ArtifactForView = { name: string; kind: string; mediaType: string; content: string | null } | null;

export function ReleaseView({ presented: p, artifact, artifactDigest, headSha }: { presented: Presented; artifact: ArtifactForView; artifactDigest: string | null; headSha: string | null }) {
  const rel = p.release ?? null;
  const tag = rel?.tag ?? p.target.branch ?? null;
  const reportText = rel ? (rel.report.content ?? null) : (artifact?.content ?? null);
  return (
    <>
      <section aria-label="Release to publish" className="space-y-2">
        <h2 className="font-medium">Release to publish</h2>
        <dl className="grid gap-3 sm:grid-cols-2">
          <Field label="Tag">
            <span className="font-mono text-xs" data-testid="release-tag">{tag ?? "not recorded"}</span>
          </Field>
          <Field label="At commit">
            <span className="font-mono text-xs">{rel?.commitSha ?? headSha ?? "—"}</span>
          </Field>
          {rel && <Field label="Release name">{rel.name}</Field>}
          <Field label="Artifact published">
            <span className="font-mono text-xs break-all" data-testid="artifact-digest">
              {rel ? `${rel.artifact.name} ${rel.artifact.digest} (${rel.artifact.sizeBytes.toLocaleString("en")} bytes)` : `${artifact?.name ?? "—"} ${artifactDigest ?? ""}`}
            </span>
            {(rel?.artifact.digest ?? artifactDigest) && <CopyButton value={rel?.artifact.digest ?? artifactDigest ?? ""} what="artifact digest" className="ml-0.5 align-middle" />}
          </Field>
        </dl>
        <p className="text-xs text-zinc-600 dark:text-zinc-400">
          Publishing is privileged: a person approves it, whatever the repository allows. At execution the artifact&apos;s bytes are read again; if their digest is not the one above, nothing is published.
        </p>
      </section>
      {rel && <PostedWords action="publish_release" presented={p} artifactName={rel.artifact.name} artifactDigest={rel.artifact.digest} body={rel.notes} where={`the release ${rel.tag}`} />}
      <section aria-label="Readiness report" className="space-y-2">
        <h2 className="font-medium">Readiness report{rel ? ` (${rel.report.name} ${rel.report.digest})` : ""}</h2>
        {reportText ? (
          <Card as="article">
            <SafeMarkdown text={reportText} />
          </Card>
        ) : (
          <p className="text-sm">No readiness report was recorded with this request.</p>
        )}
        {rel?.report.cut && <p className="text-xs">The report is cut here; the whole report is an artifact of the run.</p>}
      </section>
      {rel && artifact?.content && rel.artifact.id !== rel.report.id && (
        <section aria-label="Artifact" className="space-y-2">
          <h2 className="font-medium">Artifact</h2>
          <ArtifactBody artifact={{ ...artifact, content: artifact.content }} />
        </section>
      )}
    </>
  );
}
