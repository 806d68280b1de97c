// The bubblewrap command line for one sandbox. Pure: the caller looks at the file system and
// passes what it found, so a test can read the exact mounts.
//
// The sandbox starts from an empty root: the system folders are bound read-only, the folders
// the caller lists (the project's tool chain, the repository's git objects) read-only over them,
// the attempt's own folders read-write, and the paths to hide are masked by an empty read-only
// folder or /dev/null. Every namespace is new (user, pid, network, ipc, uts, cgroup): the agent
// is uid 1000 with no capabilities, sees only its own processes, and has only its own
// loopback; in `restricted`/`open` mode a forwarder inside (socat) carries 127.0.0.1:3128 to
// the host's egress proxy through a Unix socket bound into the sandbox, the only way out. A
// second forwarder (127.0.0.1:3129) reaches the model gateway (model-gateway.ts) the same way,
// in any network mode: the model API's key stays outside.

/** Where the egress proxy's socket is bound inside, and the proxy address the agent is given. */
export const sandboxProxySocket = "/run/airlock/egress.sock";
export const sandboxProxyPort = 3128;
/** Where the model gateway's socket is bound inside, and the base URL the agent's CLI is given. */
export const sandboxModelSocket = "/run/airlock/model.sock";
export const sandboxModelPort = 3129;
export const sandboxModelBaseUrl = `http://127.0.0.1:${sandboxModelPort}`;
export const sandboxUid = 1000;

export type SystemEntry = { path: string; symlinkTo: string | null };

export type SandboxLayout = {
  argv: string[];
  cwd: string;
  /** System folders (/usr, /etc, /bin …), each bound read-only or recreated as its symlink. */
  system: SystemEntry[];
  /** Host folders or files bound read-only at the same path. */
  readOnly: string[];
  /** Host folders bound read-write at the same path (workspace, artifacts, HOME …). */
  writable: string[];
  /** Folders under a read-only bind that are replaced by an empty, read-only folder. */
  hiddenDirs: string[];
  /** Files under a read-only bind that read as empty (/dev/null). */
  hiddenFiles: string[];
  /** Host folder bound at /tmp (on disk, so it counts against the disk limit, not memory). */
  tmpDir: string;
  /** The egress proxy's socket on the host, or null for no network at all. */
  proxySocket: string | null;
  /** The model gateway's socket on the host, or null when the agent calls no model API through Airlock. */
  modelSocket?: string | null;
  /** The forwarder inside the sandbox (an absolute path under a system folder). */
  socatPath: string;
  /** The bubblewrap status descriptor (its JSON reports the sandbox's init pid). */
  statusFd: number;
};

type Forward = { port: number; socket: string };

/** The forwarders' ports in /proc/net/tcp's notation (3128 is 0C38), for the readiness check. */
const hexPort = (port: number) => port.toString(16).toUpperCase().padStart(4, "0");

const forwarderScript = (socat: string, forwards: Forward[]) =>
  [
    ...forwards.map((f) => `${socat} TCP-LISTEN:${f.port},bind=127.0.0.1,fork,reuseaddr UNIX-CONNECT:${f.socket} 2>/dev/null &`),
    // Start the agent only once every forwarder listens, checked with shell builtins only: a
    // few fast tries, then every 10 ms, for at most 10 s.
    `listening() { while IFS= read -r l; do case "$l" in *:$1\\ *) return 0;; esac; done < /proc/net/tcp; return 1; }`,
    `ready() { for p in ${forwards.map((f) => hexPort(f.port)).join(" ")}; do listening "$p" || return 1; done; }`,
    "i=0; until ready; do",
    "  i=$((i+1)); if [ $i -gt 1200 ]; then echo 'airlock sandbox: the egress forwarder did not start' >&2; exit 125; fi",
    "  if [ $i -gt 200 ]; then sleep 0.01; fi",
    "done",
    'exec "$@"',
  ].join("\n");

export function bwrapArgs(layout: SandboxLayout): string[] {
  const args = [
    "--unshare-all",
    "--die-with-parent",
    "--new-session",
    "--cap-drop",
    "ALL",
    "--uid",
    String(sandboxUid),
    "--gid",
    String(sandboxUid),
    "--hostname",
    "airlock-sandbox",
    "--json-status-fd",
    String(layout.statusFd),
  ];
  for (const s of layout.system) {
    if (s.symlinkTo) args.push("--symlink", s.symlinkTo, s.path);
    else args.push("--ro-bind", s.path, s.path);
  }
  args.push("--proc", "/proc", "--dev", "/dev");
  // /tmp first: a writable folder that lives under the host's /tmp is then bound over it.
  args.push("--bind", layout.tmpDir, "/tmp");
  // A folder bound from inside a hidden one (the repository's objects in the data folder) goes
  // on after the mask; the others before it, so the mask hides what they would show.
  const under = (p: string) => layout.hiddenDirs.some((d) => p.startsWith(`${d}/`));
  for (const p of layout.readOnly.filter((p) => !under(p))) args.push("--ro-bind", p, p);
  // Masks go on before the writable binds, so a writable folder under a hidden one is bound
  // into the (still writable) empty folder, which is made read-only afterwards.
  for (const d of layout.hiddenDirs) args.push("--tmpfs", d);
  for (const f of layout.hiddenFiles) args.push("--ro-bind", "/dev/null", f);
  for (const p of layout.readOnly.filter(under)) args.push("--ro-bind", p, p);
  for (const p of layout.writable) args.push("--bind", p, p);
  if (layout.proxySocket) args.push("--ro-bind", layout.proxySocket, sandboxProxySocket);
  if (layout.modelSocket) args.push("--ro-bind", layout.modelSocket, sandboxModelSocket);
  for (const d of layout.hiddenDirs) args.push("--remount-ro", d);
  // The root itself is a tmpfs bubblewrap made: read-only too, so nothing can fill memory there.
  args.push("--remount-ro", "/", "--chdir", layout.cwd, "--");
  const forwards: Forward[] = [
    ...(layout.proxySocket ? [{ port: sandboxProxyPort, socket: sandboxProxySocket }] : []),
    ...(layout.modelSocket ? [{ port: sandboxModelPort, socket: sandboxModelSocket }] : []),
  ];
  if (forwards.length > 0) args.push("/bin/sh", "-c", forwarderScript(layout.socatPath, forwards), "airlock-sandbox");
  // bubblewrap exports PWD after --chdir: the agent gets exactly the environment it was given.
  args.push("/usr/bin/env", "-u", "PWD", "--", ...layout.argv);
  return args;
}

/** The variables that point the agent's HTTP clients at the forwarder (restricted and open modes). */
export function proxyEnvironment(): Record<string, string> {
  const url = `http://127.0.0.1:${sandboxProxyPort}`;
  return {
    HTTP_PROXY: url,
    HTTPS_PROXY: url,
    http_proxy: url,
    https_proxy: url,
    ALL_PROXY: url,
    all_proxy: url,
    NO_PROXY: "localhost,127.0.0.1,::1",
    no_proxy: "localhost,127.0.0.1,::1",
  };
}
