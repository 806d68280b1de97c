// Where GitHub's job-logs redirect may send Airlock. The API answers 302 with a signed URL on
// GitHub's log storage; following any Location would let a compromised or misconfigured API
// root (or a redirect chain) point the server at 127.0.0.1, a cloud metadata address or any
// host on its network. So the download goes only to hosts on this list.
//
// GitHub documents its log storage among the hosts a self-hosted runner must reach
// (docs.github.com, "Communicating with self-hosted runners": "*.actions.githubusercontent.com"
// and the "productionresultssa*.blob.core.windows.net" storage accounts for job logs). The
// whole of *.blob.core.windows.net is not on it: anyone can own a storage account there.

/** GitHub.com's log hosts; GitHub Enterprise Server sets its own in GITHUB_LOG_HOSTS. */
export const DEFAULT_GITHUB_LOG_HOSTS = "*.actions.githubusercontent.com,productionresultssa*.blob.core.windows.net";

/**
 * One allowed host: `https` unless the entry says `http://` (a test double, or a GitHub
 * Enterprise Server lab without TLS); a `*` stands for one DNS label or part of one (never a
 * dot); a port only where the entry names one.
 */
export type LogHost = { entry: string; protocol: "https:" | "http:"; host: RegExp; port: string };

const LABEL = "[a-z0-9*](?:[a-z0-9*-]{0,61}[a-z0-9*])?";
const ENTRY = new RegExp(`^(?:(https?)://)?((?:${LABEL}\\.)*${LABEL})(?::(\\d{1,5}))?$`);

/** Parses a comma-separated list; each bad entry is named in the error. */
export function parseLogHosts(text: string): { ok: true; hosts: LogHost[] } | { ok: false; error: string } {
  const entries = text
    .split(",")
    .map((e) => e.trim().toLowerCase())
    .filter((e) => e !== "");
  if (entries.length === 0) return { ok: false, error: "lists no host" };
  if (entries.length > 50) return { ok: false, error: "lists more than 50 hosts" };
  const hosts: LogHost[] = [];
  for (const entry of entries) {
    const m = entry.length <= 255 ? ENTRY.exec(entry) : null;
    if (!m) return { ok: false, error: `"${entry.slice(0, 80)}" is not a host name (optionally with http:// or a :port; * stands for part of one label)` };
    const name = m[2] as string;
    // A bare "*" or "*.com" would allow most of the internet: a wildcard needs two fixed labels after it.
    const labels = name.split(".");
    const firstWild = labels.findIndex((l) => l.includes("*"));
    if (firstWild !== -1 && labels.slice(firstWild + 1).some((l) => l.includes("*"))) return { ok: false, error: `"${entry}" has a * in more than one label` };
    if (firstWild !== -1 && labels.length - firstWild - 1 < 2) return { ok: false, error: `"${entry}" is too wide: a * needs at least two fixed labels after it (like *.example.com)` };
    const protocol = m[1] === "http" ? "http:" : "https:";
    let port = m[3] ?? "";
    if (port !== "" && (Number(port) < 1 || Number(port) > 65535)) return { ok: false, error: `"${entry}" has no valid port` };
    // A URL's port is "" when it is the scheme's default, so the entry's is too.
    if ((protocol === "https:" && port === "443") || (protocol === "http:" && port === "80")) port = "";
    const pattern = name.split("*").map((part) => part.replace(/[.-]/g, "\\$&")).join("[a-z0-9-]+");
    hosts.push({ entry, protocol, host: new RegExp(`^${pattern}$`), port });
  }
  return { ok: true, hosts };
}

/** Whether a download URL is on the list (scheme, host and port as the entry names them). */
export function logHostAllows(hosts: readonly LogHost[], url: URL): boolean {
  const hostname = url.hostname.toLowerCase();
  // The URL parser already turned an IP written oddly (0x7f.1, 2130706433) into its dotted form,
  // so an address matches only an entry that names that address.
  return hosts.some((h) => h.protocol === url.protocol && h.host.test(hostname) && h.port === url.port);
}

/** The list GitHub.com uses, parsed (it is known to be valid). */
export function defaultLogHosts(): LogHost[] {
  const parsed = parseLogHosts(DEFAULT_GITHUB_LOG_HOSTS);
  if (!parsed.ok) throw new Error(`DEFAULT_GITHUB_LOG_HOSTS: ${parsed.error}`);
  return parsed.hosts;
}
