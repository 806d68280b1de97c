import { tmpdir } from "node:os";
import { join } from "node:path";
import type { AgentSandbox } from "@/server/execution/agents/types";
import { defaultSandboxLimits, type SandboxLimits, type SandboxNetwork } from "./policy";
import { hostView } from "./system";

/** The real bubblewrap sandbox for tests that start an agent directly: the project read-only, no network. */
export function testSandbox(opts: { network?: SandboxNetwork; limits?: Partial<SandboxLimits>; dataDir?: string } = {}): AgentSandbox {
  const view = hostView({ projectRoot: process.cwd(), dataDir: opts.dataDir ?? join(process.cwd(), ".airlock") });
  return {
    kind: "bubblewrap",
    network: opts.network ?? { mode: "none", allowedHosts: [] },
    limits: { ...defaultSandboxLimits, ...opts.limits },
    readOnlyPaths: view.readOnlyPaths,
    writablePaths: [],
    hiddenPaths: view.hiddenPaths,
    stateDir: join(tmpdir(), "airlock-test-sandboxes"),
  };
}
