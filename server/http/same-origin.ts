// Mutations must come from Airlock's own pages. A cross-site form can post
// `text/plain` or `application/x-www-form-urlencoded` with `Origin: null` or a
// foreign origin without a CORS preflight; requiring a JSON content type and a
// same-origin request closes that door.

export type OriginVerdict = { ok: true } | { ok: false; reason: string };

export function checkSameOriginMutation(req: Request): OriginVerdict {
  const contentType = req.headers.get("content-type") ?? "";
  if (!/^application\/json\b/i.test(contentType)) {
    return { ok: false, reason: "mutations must be sent as application/json" };
  }
  const site = req.headers.get("sec-fetch-site");
  if (site && site !== "same-origin" && site !== "none") {
    return { ok: false, reason: `cross-site request refused (Sec-Fetch-Site: ${site})` };
  }
  const origin = req.headers.get("origin");
  if (origin !== null) {
    const host = req.headers.get("x-forwarded-host") ?? req.headers.get("host");
    let originHost: string | null = null;
    try {
      originHost = origin === "null" ? null : new URL(origin).host;
    } catch {
      originHost = null;
    }
    if (!originHost || originHost !== host) {
      return { ok: false, reason: `cross-origin request refused (Origin: ${origin})` };
    }
  }
  return { ok: true };
}
