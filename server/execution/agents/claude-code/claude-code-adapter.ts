import { constants as fsConstants } from "node:fs";
import { lstat, mkdir, open, realpath, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { dirname, join, sep } from "node:path";
import { envVarName } from "@/server/env";
import type { StackSpec } from "@/server/domain/stacks/spec";
import { createCommandAdapter } from "../command-adapter";
import { type AgentAdapter, AgentStartError } from "../types";
import { continuationOf } from "@/server/domain/runs/continuation";
import { type ClaudeCodeAdapter, claudeCodeLaunchPlan, type Grants, type LaunchPlan } from "./launch-plan";
import type { ModelGatewaySpec } from "@/server/execution/sandbox/model-gateway";
import { restoreSession, saveSession, storedSession } from "./session-store";

// Runs the Claude Code CLI as the agent, built from the stack (launch-plan.ts), through the
// command adapter: same sandbox, stdin prompt, stream-json decoding, limits and artifacts. The
// generated files live in a read-only folder of the session; skills are copied from the
// repository into the session's HOME, where the CLI reads a user's skills.

const maxSkillBytes = 64 * 1024;

/** The `claude` binary installed with Airlock (@anthropic-ai/claude-code, a native executable). */
export function installedClaudeBinary(): string {
  const pkg = createRequire(import.meta.url).resolve("@anthropic-ai/claude-code/package.json", { paths: [process.cwd()] });
  return join(dirname(pkg), "bin", "claude.exe");
}

export function createClaudeCodeAdapter(opts: {
  spec: StackSpec;
  adapter: ClaudeCodeAdapter;
  grants: Grants;
  /** Optional MCP servers that failed their health check: left out of --mcp-config, and said so. */
  leaveOut?: ReadonlyMap<string, string>;
  /**
   * Where the CLI's session files are kept past the attempt (session-store.ts), and the run
   * whose they are: a continuation of it resumes them. Without it nothing is kept or resumed.
   */
  sessions?: { store: string; runId: string };
  binary?: string;
  killGraceMs?: number;
  now?: () => Date;
}): AgentAdapter {
  const binary = opts.binary ?? installedClaudeBinary();
  const sessions = opts.sessions;
  const commandFor = (resume: Resume | null, continuationNote: string | null) =>
    createCommandAdapter({
      argv: [binary],
      outputFormat: "claude-stream-json",
      killGraceMs: opts.killGraceMs,
      now: opts.now,
      prepare: async (session) => {
        const configDir = join(session.sessionDir, "claude");
        const plan = claudeCodeLaunchPlan(
          opts.spec,
          opts.adapter,
          { binary, configDir, contextFile: session.contextFile, artifactsDir: session.artifactsDir },
          opts.grants,
          opts.leaveOut,
          resume?.sessionId,
        );
        const { env, modelGateway } = environmentFor(plan, opts.adapter, session.env);
        await mkdir(configDir, { recursive: true });
        for (const f of plan.files) await writeFile(join(configDir, f.name), f.content, { mode: 0o444 });
        await materialiseSkills(opts.spec.skills, session.workspaceDir, session.home);
        if (resume) await restoreSession({ stored: resume.stored, home: session.home, cwd: session.workspaceDir, sessionId: resume.sessionId });
        return {
          argv: plan.argv,
          env,
          readOnlyPaths: [configDir],
          modelGateway,
          events: [{ type: "log", payload: { stream: "system", text: describePlan(plan, continuationNote) } }],
          launch: { command: plan.argv, files: plan.files, env: plan.env, withheld: plan.withheld, continuation: continuationNote },
        };
      },
      afterExit: sessions
        ? async ({ home, externalSessionId }) => {
            if (!externalSessionId) return [];
            const kept = await saveSession({ home, store: sessions.store, runId: sessions.runId, sessionId: externalSessionId });
            return kept.saved ? [] : [{ type: "log", payload: { stream: "system", text: `Claude session ${externalSessionId} not kept for a continuation: ${kept.reason}` } }];
          }
        : undefined,
    });
  return {
    kind: "claude-code",
    start: async (options) => {
      // A continuation (Send, Resume) resumes the earlier session where its file was kept, and
      // then sends only the new text; otherwise the run's own prompt (a summary and the new text).
      const continuation = continuationOf(options.contextBundle);
      const earlier = continuation?.session ?? null;
      const stored = continuation && earlier && sessions ? await storedSession(sessions.store, continuation.parentRunId, earlier.agentSessionId) : null;
      if (continuation && earlier && stored) {
        const note = `Continuation of run #${continuation.parentRunNumber}: resumes Claude session ${earlier.agentSessionId} of its attempt ${earlier.attemptNumber} (--resume, forked to a new session id); the prompt is the new text alone.`;
        return commandFor({ sessionId: earlier.agentSessionId, stored }, note).start({ ...options, prompt: continuation.newText });
      }
      const why = !continuation ? null : !earlier ? `run #${continuation.parentRunNumber} stored no Claude session` : `the session file of run #${continuation.parentRunNumber} was not kept`;
      const note = why ? `Continuation of run #${continuation!.parentRunNumber}: a fresh session (${why}); the prompt carries a bounded summary of the transcript so far and the new text.` : null;
      return commandFor(null, note).start(options);
    },
  };
}

/** Where the CLI calls the model when no grant names a base URL. */
const anthropicApi = "https://api.anthropic.com";

type Resume = { sessionId: string; stored: string };

/**
 * The process environment: the MCP servers' granted variables and switches that keep the CLI
 * from updating itself or phoning home; nothing the plan does not name, whatever else was
 * granted. The model API key and base URL go to the sandbox's model gateway instead: in a
 * sandbox the CLI holds a placeholder, and the key is added outside (sandbox/model-gateway.ts).
 */
function environmentFor(plan: LaunchPlan, adapter: ClaudeCodeAdapter, granted: Record<string, string>): { env: Record<string, string>; modelGateway: ModelGatewaySpec } {
  // Only a granted key counts: a value the server happens to hold is not this stack's to use.
  const apiKey = plan.env.some((e) => e.name === "ANTHROPIC_API_KEY") ? granted[envVarName(adapter.apiKeySecret)] : undefined;
  if (!apiKey) {
    throw new AgentStartError(
      `the model API key is not set: grant the secret ${adapter.apiKeySecret} to this stack and set AIRLOCK_SECRET_${envVarName(adapter.apiKeySecret)} on the server`,
    );
  }
  const env: Record<string, string> = {
    DISABLE_AUTOUPDATER: "1",
    DISABLE_TELEMETRY: "1",
    DISABLE_ERROR_REPORTING: "1",
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
    // Defence in depth behind the gateway: the CLI's own credentials are scrubbed from its Bash
    // commands, hooks and MCP servers (as claude-code-action does for untrusted content).
    CLAUDE_CODE_SUBPROCESS_ENV_SCRUB: "1",
  };
  let upstream = anthropicApi;
  for (const { name } of plan.env) {
    if (name === "ANTHROPIC_API_KEY") continue;
    if (name === "ANTHROPIC_BASE_URL") {
      const url = adapter.baseUrlConfigMap ? granted[envVarName(adapter.baseUrlConfigMap)] : undefined;
      if (url) upstream = url;
    } else if (granted[name] !== undefined) env[name] = granted[name];
  }
  return { env, modelGateway: { upstream, key: apiKey, keyHeader: "x-api-key", baseUrlVariable: "ANTHROPIC_BASE_URL", keyVariable: "ANTHROPIC_API_KEY" } };
}

/** The plan as the transcript shows it: the command line and each generated file, names only. */
export function describePlan(plan: LaunchPlan, continuationNote: string | null = null): string {
  const parts = [
    ...(continuationNote ? [continuationNote] : []),
    `Claude Code command line (the prompt goes on stdin):\n${plan.argv.map((a) => JSON.stringify(a)).join(" ")}`,
    `Environment: ${plan.env.map((e) => `${e.name} (${e.from})`).join(", ") || "none granted"}`,
    ...plan.files.map((f) => `${f.name}:\n${f.content}`),
    ...(plan.withheld.length > 0 ? [`Withheld: ${plan.withheld.join("; ")}`] : []),
  ];
  return parts.join("\n\n");
}

/**
 * Copies each named skill's SKILL.md from the repository (.claude/skills/<name>/SKILL.md at the
 * run's commit) into HOME/.claude/skills/<name>/. The copy runs outside the sandbox, so the
 * file must be a regular file inside the workspace: a symlink (to the server's own files) or a
 * path escaping the workspace is refused, and the size is bounded.
 */
async function materialiseSkills(skills: string[], workspaceDir: string, home: string) {
  const root = await realpath(workspaceDir);
  for (const name of skills) {
    const rel = join(".claude", "skills", name, "SKILL.md");
    const source = join(root, rel);
    const missing = () => new AgentStartError(`skill ${name}: ${rel} is not a file of the repository at this commit`);
    for (let p = source; p.length > root.length; p = dirname(p)) {
      const info = await lstat(p).catch(() => null);
      if (!info) throw missing();
      if (info.isSymbolicLink()) throw new AgentStartError(`skill ${name}: ${rel} goes through a symbolic link; skills must be plain files of the repository`);
    }
    if (!(await realpath(source)).startsWith(`${root}${sep}`)) throw missing();
    // O_NOFOLLOW: the file cannot be swapped for a link between the check and the read.
    const handle = await open(source, fsConstants.O_RDONLY | fsConstants.O_NOFOLLOW).catch(() => null);
    if (!handle) throw missing();
    try {
      const info = await handle.stat();
      if (!info.isFile()) throw missing();
      if (info.size > maxSkillBytes) throw new AgentStartError(`skill ${name}: SKILL.md is larger than ${maxSkillBytes / 1024} KiB`);
      const content = await handle.readFile();
      const dir = join(home, ".claude", "skills", name);
      await mkdir(dir, { recursive: true });
      await writeFile(join(dir, "SKILL.md"), content);
    } finally {
      await handle.close();
    }
  }
}
