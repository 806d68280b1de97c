/**
 * Keeps absolute http(s) URLs; anything else (javascript:, data:, relative,
 * malformed) becomes "" so it is never used as a link.
 */
export function safeUrl(url: string | null | undefined): string {
  if (!url) return "";
  try {
    const u = new URL(url.trim());
    return u.protocol === "http:" || u.protocol === "https:" ? u.href : "";
  } catch {
    return "";
  }
}
