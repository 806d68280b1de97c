// Search within a transcript: the text an event is searched by, and splitting
// shown text into matched / unmatched parts for highlighting. The server's
// search (runs.searchEvents) uses the same rule: the event type or any string
// value in the payload contains the query, case-insensitively; keys never match.

/** Every string value in a JSON value, depth first, bounded so a hostile payload cannot stall the page. */
export function stringLeaves(value: unknown, out: string[] = [], budget = { nodes: 10_000 }): string[] {
  if (budget.nodes-- <= 0) return out;
  if (typeof value === "string") out.push(value);
  else if (Array.isArray(value)) for (const v of value) stringLeaves(v, out, budget);
  else if (value && typeof value === "object") for (const v of Object.values(value)) stringLeaves(v, out, budget);
  return out;
}

export function eventSearchText(event: { type: string; payload: unknown }): string {
  return [event.type, ...stringLeaves(event.payload)].join("\n");
}

export type Highlighted = { text: string; match: boolean };

/** `text` split around every case-insensitive occurrence of `query`. */
export function splitHighlights(text: string, query: string): Highlighted[] {
  const q = query.trim().toLowerCase();
  if (q === "") return [{ text, match: false }];
  const lower = text.toLowerCase();
  // toLowerCase can change length (e.g. "İ"); then offsets would drift, so highlight nothing.
  if (lower.length !== text.length) return [{ text, match: false }];
  const out: Highlighted[] = [];
  let at = 0;
  for (;;) {
    const i = lower.indexOf(q, at);
    if (i === -1) break;
    if (i > at) out.push({ text: text.slice(at, i), match: false });
    out.push({ text: text.slice(i, i + q.length), match: true });
    at = i + q.length;
  }
  if (at < text.length) out.push({ text: text.slice(at), match: false });
  return out;
}

/** The match to go to from `current` (a seq) in `direction`, wrapping around. */
export function stepMatch(matches: readonly number[], current: number | null, direction: 1 | -1): number | null {
  if (matches.length === 0) return null;
  if (current === null) return direction === 1 ? matches[0]! : matches.at(-1)!;
  if (direction === 1) return matches.find((s) => s > current) ?? matches[0]!;
  for (let i = matches.length - 1; i >= 0; i--) if (matches[i]! < current) return matches[i]!;
  return matches.at(-1)!;
}
