import { describe, expect, it } from "vitest";
import { bwrapArgs, type SandboxLayout } from "./bwrap-args";

// The exact bubblewrap command line: namespaces, the order of mounts (what a later mount hides),
// and the forwarder that is the only way out.

const layout = (patch: Partial<SandboxLayout> = {}): SandboxLayout => ({
  argv: ["node", "agent.mjs"],
  cwd: "/data/workspaces/r1/attempt-1",
  system: [
    { path: "/usr", symlinkTo: null },
    { path: "/bin", symlinkTo: "usr/bin" },
  ],
  readOnly: ["/srv/airlock", "/data/forge/o/n.git"],
  writable: ["/data/workspaces/r1/attempt-1", "/data/forge/o/n.git/worktrees/attempt-1"],
  hiddenDirs: ["/data", "/srv/airlock/.airlock"],
  hiddenFiles: ["/etc/shadow"],
  tmpDir: "/tmp/s1/tmp",
  proxySocket: null,
  socatPath: "/usr/bin/socat",
  statusFd: 3,
  ...patch,
});

const pairs = (args: string[], flag: string) => args.flatMap((a, i) => (a === flag ? [`${args[i + 1]}${flag === "--tmpfs" || flag === "--remount-ro" ? "" : ` ${args[i + 2]}`}`] : []));

describe("bwrapArgs", () => {
  it("unshares every namespace, dies with its parent, and runs as uid 1000 with no capabilities", () => {
    const args = bwrapArgs(layout());
    expect(args.slice(0, 14)).toEqual(["--unshare-all", "--die-with-parent", "--new-session", "--cap-drop", "ALL", "--uid", "1000", "--gid", "1000", "--hostname", "airlock-sandbox", "--json-status-fd", "3", "--ro-bind"]);
    expect(args).not.toContain("--share-net");
  });

  it("masks the data folder after binding the project, then binds back only the attempt's own folders", () => {
    const args = bwrapArgs(layout());
    const at = (flag: string, value: string) => args.findIndex((a, i) => a === flag && args[i + 1] === value);
    expect(at("--ro-bind", "/srv/airlock")).toBeLessThan(at("--tmpfs", "/srv/airlock/.airlock"));
    expect(at("--tmpfs", "/data")).toBeLessThan(at("--ro-bind", "/data/forge/o/n.git"));
    expect(at("--ro-bind", "/data/forge/o/n.git")).toBeLessThan(at("--bind", "/data/forge/o/n.git/worktrees/attempt-1"));
    expect(pairs(args, "--bind")).toEqual(["/tmp/s1/tmp /tmp", "/data/workspaces/r1/attempt-1 /data/workspaces/r1/attempt-1", "/data/forge/o/n.git/worktrees/attempt-1 /data/forge/o/n.git/worktrees/attempt-1"]);
    expect(pairs(args, "--remount-ro")).toEqual(["/data", "/srv/airlock/.airlock", "/"]);
    expect(pairs(args, "--ro-bind")).toContain("/dev/null /etc/shadow");
    expect(pairs(args, "--symlink")).toEqual(["usr/bin /bin"]);
  });

  it("without a proxy runs the agent directly (no PWD added); with one, behind the forwarder", () => {
    const direct = bwrapArgs(layout());
    expect(direct.slice(direct.indexOf("--") + 1)).toEqual(["/usr/bin/env", "-u", "PWD", "--", "node", "agent.mjs"]);
    const proxied = bwrapArgs(layout({ proxySocket: "/tmp/s1/egress.sock" }));
    expect(pairs(proxied, "--ro-bind")).toContain("/tmp/s1/egress.sock /run/airlock/egress.sock");
    const tail = proxied.slice(proxied.indexOf("--") + 1);
    expect(tail.slice(0, 2)).toEqual(["/bin/sh", "-c"]);
    expect(tail[2]).toContain("/usr/bin/socat TCP-LISTEN:3128,bind=127.0.0.1,fork,reuseaddr UNIX-CONNECT:/run/airlock/egress.sock");
    expect(tail.slice(3)).toEqual(["airlock-sandbox", "/usr/bin/env", "-u", "PWD", "--", "node", "agent.mjs"]);
  });

  it("the model gateway gets a forwarder of its own, in any network mode, and the agent waits for both", () => {
    const modelOnly = bwrapArgs(layout({ modelSocket: "/tmp/s1/model.sock" }));
    expect(pairs(modelOnly, "--ro-bind")).toContain("/tmp/s1/model.sock /run/airlock/model.sock");
    const script = modelOnly[modelOnly.indexOf("--") + 3]!;
    expect(script).toContain("TCP-LISTEN:3129,bind=127.0.0.1,fork,reuseaddr UNIX-CONNECT:/run/airlock/model.sock");
    expect(script).not.toContain("3128");
    const both = bwrapArgs(layout({ proxySocket: "/tmp/s1/egress.sock", modelSocket: "/tmp/s1/model.sock" }));
    expect(both[both.indexOf("--") + 3]).toContain("for p in 0C38 0C39;");
  });
});
