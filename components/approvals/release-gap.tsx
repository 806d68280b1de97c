import type { PresentedReleaseGap } from "@/server/domain/approvals/schemas";
import { Field } from "./fields";

// release_gap on the approval screen: one readiness gap Airlock found in a release its rule
// matched, exactly what approving accepts. Nothing is written to a forge; the release is
// published (a separate publish_release request) only once every gap of the run is accepted.

const KIND_LABELS: Record<PresentedReleaseGap["kind"], string> = {
  missing_artifact: "Missing artifact",
  checksum_mismatch: "Checksum mismatch",
  checksum_unlisted: "Artifact not in the checksum file",
  checksum_unverified: "Checksum not verified",
  version_mismatch: "Version out of line",
};

export function ReleaseGapView({ gap }: { gap: PresentedReleaseGap }) {
  return (
    <section aria-label="Readiness gap" className="space-y-2">
      <h2 className="font-medium">Readiness gap: {KIND_LABELS[gap.kind]}</h2>
      <p className="text-sm" data-testid="release-gap-detail">{gap.detail}</p>
      <dl className="grid gap-3 sm:grid-cols-2">
        <Field label="Release">
          <span className="font-mono text-xs">{gap.tag} (version {gap.version}) at {gap.commitSha}</span>
        </Field>
        <Field label="About">
          <span className="font-mono text-xs break-all">{gap.subject}</span>
        </Field>
        <Field label="Found by">
          <span className="text-xs">release rule {gap.ruleName}</span>
        </Field>
      </dl>
      <p className="text-sm text-zinc-600 dark:text-zinc-400">
        Approving accepts this gap for publishing {gap.tag}; nothing is written to the forge. Rejecting it keeps the release from being published.
      </p>
    </section>
  );
}
