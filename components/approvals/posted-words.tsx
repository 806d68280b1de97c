import { CopyButton } from "@/components/ui/copy-button";
import type { Presented } from "@/server/domain/approvals/schemas";

// A comment or review as the forge will receive it: the body the request froze, byte for byte
// (a <pre>, never rendered as Markdown or HTML here), then the one line the forge appends, the
// hidden write-back marker that makes the post findable after a crash (its key is assigned when
// the approval is given). A review also shows its event (COMMENT, REQUEST_CHANGES, APPROVE) as
// the forge receives it. What is shown is what is posted.

const wordActions = new Set(["comment", "review", "approve_review"]);

export const postsWords = (action: string) => wordActions.has(action);

const heading: Record<string, string> = {
  comment: "Comment to post",
  review: "Review to post",
  approve_review: "Approving review to post",
  open_pr: "Pull request body",
  publish_release: "Release notes",
};

const eventWords: Record<string, string> = {
  COMMENT: "a review that comments, neither approving nor blocking",
  REQUEST_CHANGES: "a review that requests changes",
  APPROVE: "a review that approves the pull request",
};

export function PostedWords({
  action,
  presented: p,
  artifactName,
  artifactDigest,
  body: bodyOverride,
  where: whereOverride,
}: {
  action: string;
  presented: Presented;
  artifactName: string | null;
  artifactDigest: string | null;
  /** Another text than the request's message (open_pr: the PR's body). */
  body?: string;
  /** Where it is posted, in words (open_pr: "the new pull request from …"). */
  where?: string;
}) {
  const where = whereOverride ?? (p.target.prNumber ? `pull request #${p.target.prNumber}` : "no pull request (it cannot be posted)");
  const body = bodyOverride ?? p.message ?? "";
  return (
    <section aria-label="What will be posted" className="space-y-2">
      <h2 className="font-medium">{heading[action] ?? "Text to post"}</h2>
      <p className="text-sm">
        On {where} of {p.target.repository}, as Airlock&apos;s bot.
        {artifactName && artifactDigest && (
          <>
            {" "}From <span className="font-mono text-xs break-all" data-testid="artifact-digest">{artifactName} {artifactDigest}</span>
            <CopyButton value={artifactDigest} what="artifact digest" className="ml-0.5 align-middle" />
          </>
        )}
      </p>
      {p.review && (
        <p className="text-sm">
          Review event: <code data-testid="review-event">{p.review.event}</code> ({eventWords[p.review.event]})
        </p>
      )}
      {!p.review && (action === "review" || action === "approve_review") && (
        <p className="text-sm">
          This request records no review event: it is posted as <code>{action === "approve_review" ? "APPROVE" : "COMMENT"}</code>.
        </p>
      )}
      <p className="text-xs text-zinc-600 dark:text-zinc-400">
        {new TextEncoder().encode(body).length.toLocaleString("en")} bytes (UTF-8), shown as sent (not rendered). The forge appends one hidden line after a blank line:{" "}
        <code>&lt;!-- airlock-write-back: wb_… --&gt;</code>, with the key given at approval.
      </p>
      <pre data-testid="posted-body" className="max-h-[32rem] overflow-auto rounded border border-zinc-200 bg-zinc-50 p-2 text-xs whitespace-pre-wrap dark:border-zinc-800 dark:bg-zinc-950">
        {body || "(empty)"}
      </pre>
      {body && <CopyButton value={body} what="text to post" />}
    </section>
  );
}
