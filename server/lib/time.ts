// Times in messages a person reads (refusals, conflicts): to the minute, in UTC and saying so,
// since the server cannot know the reader's zone. The UI renders stored times itself.

/** "2026-12-02 14:03 UTC". */
export function utcMinute(date: Date): string {
  return `${date.toISOString().slice(0, 16).replace("T", " ")} UTC`;
}
