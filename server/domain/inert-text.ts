// Text from an agent or a fork (a diagnosis, release notes, a PR title, a check's name) made inert
// before Airlock posts it to a forge: a comment, a review, a pull request, a release or its own
// check run. Vocabulary every area that writes to a forge shares (writebacks/, check-runs/).

/** The most of the agent's summary a comment carries (GitHub's own limit is 65,536 characters). */
export const maxSummaryChars = 8_000;

const controlChars = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F\u200B-\u200F\u202A-\u202E\u2066-\u2069]/g;

/**
 * The agent's text made inert for a Markdown comment: HTML is escaped (no tags, no comments, so
 * no forged write-back marker), every @mention and team mention is broken with a zero-width
 * space after the @ (GitHub notifies nobody, the bot's own command handle included), control
 * and bidirectional characters are removed, and the length is bounded.
 */
export function inertSummary(text: string): { text: string; cut: boolean } {
  const clean = text
    .replace(/\r\n?/g, "\n")
    .replace(controlChars, "")
    .replaceAll("&", "&amp;")
    .replaceAll("<", "&lt;")
    .replaceAll(">", "&gt;")
    .replace(/@(?=[A-Za-z0-9_-])/g, "@\u200B")
    .trim();
  const chars = [...clean];
  if (chars.length <= maxSummaryChars) return { text: clean, cut: false };
  return { text: chars.slice(0, maxSummaryChars).join("").trimEnd(), cut: true };
}
