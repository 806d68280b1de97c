import { ArtifactBody } from "@/components/runs/artifact-view";
import type { PresentedRollBack } from "@/server/domain/approvals/schemas";
import { Field } from "./fields";

// roll_back on the approval screen: the failed deploy triage decided to roll back, and how the
// repository rolls back (its settings choose): the revert diff that will be committed on the
// branch, or the last good deploy that will run again.

type ArtifactForView = { name: string; kind: string; mediaType: string; content: string | null } | null;

export function RollBackView({ rollBack: r, message, artifact, artifactDigest }: { rollBack: PresentedRollBack; message: string | null; artifact: ArtifactForView; artifactDigest: string | null }) {
  return (
    <section aria-label="Roll back" className="space-y-2">
      <h2 className="font-medium">{r.mode === "revert" ? "Revert the failing deploy's change" : "Rerun the last good deploy"}</h2>
      <dl className="grid gap-3 sm:grid-cols-2">
        <Field label="Failed deploy">
          <span className="font-mono text-xs" data-testid="roll-back-failing">{r.failingCheck} at {r.failingSha}</span>
        </Field>
        {r.mode === "revert" ? (
          <Field label="Revert commit on">
            <span className="font-mono text-xs">{r.branch}</span>
          </Field>
        ) : (
          <Field label="Good deploy rerun">
            <span className="font-mono text-xs" data-testid="roll-back-good">{r.good ? `${r.good.sha} (run ${r.good.externalId}${r.good.branch ? ` on ${r.good.branch}` : ""})` : "none"}</span>
          </Field>
        )}
      </dl>
      {message && <pre className="rounded bg-zinc-50 p-2 text-xs whitespace-pre-wrap dark:bg-zinc-950" data-testid="roll-back-message">{message}</pre>}
      {r.mode === "revert" ? (
        <>
          <p className="font-mono text-xs break-all" data-testid="artifact-digest">
            {artifact?.name} {artifactDigest}
          </p>
          {artifact?.content ? <ArtifactBody artifact={{ ...artifact, content: artifact.content }} /> : <p className="text-sm">The revert diff is not available.</p>}
        </>
      ) : (
        <p className="text-sm">Nothing is committed: the deploy check runs again at the good commit.</p>
      )}
    </section>
  );
}
