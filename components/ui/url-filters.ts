import { createParser } from "nuqs/server";

// Filters live in the URL, so a reload, a shared link or the back button shows the same list.
// Each list declares its parsers once (nuqs); its server page loads them to prefetch exactly
// what the client component then asks for. Imports nothing client-only, so pages can use it.

/** Free text: trimmed and bounded; blank is absent. */
export const parseAsText = (max: number) =>
  createParser({
    parse: (v: string) => {
      const t = v.trim();
      return t ? t.slice(0, max) : null;
    },
    serialize: (v: string) => v,
  });

type Inputs<T> = { [K in keyof T]: Exclude<T[K], null> | undefined };

/** nuqs reads an absent filter as null; procedures take undefined. */
export function toInput<T extends Record<string, unknown>>(values: T): Inputs<T> {
  return Object.fromEntries(Object.entries(values).map(([k, v]) => [k, v ?? undefined])) as Inputs<T>;
}
