// A write-back request's target in words (pure): shared by the approval screen, the run page and
// the transcript.

export type TargetRow = { action: string; targetBranch: string | null; targetPrNumber: number | null; targetCheck: string | null };

/** A request's target without its repository: "branch main", "tag v2.14.0" (a release names a tag), "PR #412", "check CI / lint". */
export function targetParts(row: TargetRow): string[] {
  const ref = row.targetBranch && (row.action === "publish_release" || row.action === "release_gap" ? `tag ${row.targetBranch}` : `branch ${row.targetBranch}`);
  return [ref, row.targetPrNumber && `PR #${row.targetPrNumber}`, row.targetCheck && `check ${row.targetCheck}`].filter((x): x is string => Boolean(x));
}
