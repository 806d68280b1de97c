import { type IncomingMessage, request as httpRequest } from "node:http";
import { request as httpsRequest } from "node:https";
import { isIP, type LookupFunction } from "node:net";
import { Readable } from "node:stream";

// A fetch for requests the worker makes on an agent's behalf (the MCP health probe), held to the
// egress proxy's rule: the address that passed the check is the one dialled. The global fetch
// would resolve the name a second time, and a name that answers a public address to the check
// and 127.0.0.1 to the connection (DNS rebinding) would reach the worker's own services. The
// URL's name still goes in the Host header and in TLS (SNI and the certificate check). Redirects
// are refused, never followed.

/** The address to dial for a URL, or a throw with the reason it is refused. */
export type AddressCheck = (url: URL) => Promise<string>;

export function pinnedFetch(check: AddressCheck): (input: string | URL | Request, init?: RequestInit) => Promise<Response> {
  return async (input, init) => {
    const request = input instanceof Request ? input : null;
    const url = new URL(request ? request.url : input.toString());
    if (url.protocol !== "http:" && url.protocol !== "https:") throw new TypeError(`fetch: ${url.protocol} is not http or https`);
    const address = await check(url);
    const family = isIP(address) === 6 ? 6 : 4;
    const lookup: LookupFunction = (_host, options, callback) => {
      // Node 20 asks for every address (autoSelectFamily): answer with the one that was checked.
      if ((options as { all?: boolean }).all) (callback as unknown as (e: null, a: { address: string; family: number }[]) => void)(null, [{ address, family }]);
      else callback(null, address, family);
    };
    const headers = new Headers(request?.headers);
    for (const [k, v] of new Headers(init?.headers)) headers.set(k, v);
    const method = init?.method ?? request?.method ?? "GET";
    const body = init?.body ?? null;
    const payload = body === null || body === undefined ? null : typeof body === "string" ? body : body instanceof Uint8Array ? body : await new Response(body as BodyInit).arrayBuffer().then((b) => Buffer.from(b));
    const send = url.protocol === "https:" ? httpsRequest : httpRequest;
    const signal = init?.signal ?? request?.signal ?? undefined;
    return new Promise<Response>((resolve, reject) => {
      const req = send(url, { method, headers: Object.fromEntries(headers), lookup, servername: isIP(url.hostname) ? undefined : url.hostname, signal }, (res: IncomingMessage) => {
        const status = res.statusCode ?? 502;
        if (status >= 300 && status < 400 && res.headers.location) {
          res.resume();
          return reject(new TypeError(`fetch: a redirect to ${res.headers.location.slice(0, 200)} is not followed`));
        }
        const out = new Headers();
        for (const [k, v] of Object.entries(res.headers)) {
          if (v === undefined) continue;
          for (const one of Array.isArray(v) ? v : [v]) out.append(k, one);
        }
        const stream = status === 204 || status === 304 || method === "HEAD" ? null : (Readable.toWeb(res) as ReadableStream<Uint8Array>);
        resolve(new Response(stream, { status, statusText: res.statusMessage, headers: out }));
      });
      req.on("error", reject);
      req.end(payload ?? undefined);
    });
  };
}
