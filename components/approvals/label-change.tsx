import { Alert } from "@/components/ui/alert";
import { presentedLabelChange } from "@/server/domain/approvals/schemas";

// What a set_labels approval lets change on the forge: the pull request and the labels added and
// removed, read from what was frozen when the request was made. Label names come from repository
// settings and the forge: rendered as text only.

const names = (xs: readonly string[]) => (xs.length ? xs.join(", ") : "none");

export function LabelChangeView({ presented, fallbackPrNumber }: { presented: unknown; fallbackPrNumber: number | null }) {
  const change = presentedLabelChange(presented);
  if (!change) {
    return (
      <Alert>This request carries no valid label change; there is nothing here to approve.</Alert>
    );
  }
  const pr = change.prNumber ?? fallbackPrNumber;
  return (
    <dl className="grid gap-3 sm:grid-cols-3" data-testid="label-change">
      <div>
        <dt className="text-xs font-medium text-zinc-600 dark:text-zinc-400">Pull request</dt>
        <dd className="text-sm">{pr ? `#${pr}` : "unknown"}</dd>
      </div>
      <div>
        <dt className="text-xs font-medium text-zinc-600 dark:text-zinc-400">Labels added</dt>
        <dd className="text-sm break-words" data-testid="labels-added">
          {names(change.add)}
        </dd>
      </div>
      <div>
        <dt className="text-xs font-medium text-zinc-600 dark:text-zinc-400">Labels removed</dt>
        <dd className="text-sm break-words" data-testid="labels-removed">
          {names(change.remove)}
        </dd>
      </div>
    </dl>
  );
}

/** One line for lists (the run view's approvals): what a label flip adds and removes. */
export function LabelChangeSummary({ presented }: { presented: unknown }) {
  const change = presentedLabelChange(presented);
  return <span data-testid="label-change-summary">{change ? `adds ${names(change.add)}; removes ${names(change.remove)}` : "no valid label change"}</span>;
}
