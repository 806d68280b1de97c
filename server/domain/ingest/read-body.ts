// Read a request body with a hard byte limit: the declared Content-Length is checked first, and
// the stream is counted while it is read (a chunked body has no length), so no more than the
// limit (plus one chunk) is ever held in memory.

export type BodyResult = { ok: true; bytes: Uint8Array } | { ok: false; reason: "too_large"; limit: number };

export async function readBodyLimited(request: Request, limit: number): Promise<BodyResult> {
  const declared = request.headers.get("content-length");
  const length = declared !== null && /^\d+$/.test(declared) ? Number(declared) : null;
  if (length !== null && length > limit) return { ok: false, reason: "too_large", limit };
  if (request.body === null) return { ok: true, bytes: new Uint8Array(0) };
  if (length !== null) {
    // HTTP framing stops a declared body at its length: read it whole (cheaper than the stream).
    const bytes = new Uint8Array(await request.arrayBuffer());
    return bytes.byteLength > limit ? { ok: false, reason: "too_large", limit } : { ok: true, bytes };
  }
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > limit) {
      // Stop the upload: nothing past the limit is read or kept.
      await reader.cancel().catch(() => undefined);
      return { ok: false, reason: "too_large", limit };
    }
    chunks.push(value);
  }
  if (chunks.length === 1 && chunks[0]) return { ok: true, bytes: chunks[0] };
  const bytes = new Uint8Array(total);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return { ok: true, bytes };
}
