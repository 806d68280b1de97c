import type { PrismaClient } from "@/server/db";
import { type StackSpec, stackSnapshot, zStackSpec } from "@/server/domain/stacks/spec";
import type { DemoUserKey } from "./users";
import { minutesBefore } from "./util";

// Agent stacks and their versions. Every spec goes through zStackSpec (so the
// stored JSON has its defaults filled in, exactly as a save from the form would
// store it); a version's digest is the digest of the snapshot a run takes of it.

export type StackName = "claude-code-ci-diagnoser" | "scripted-demo-fixer" | "release-reviewer" | "scripted-demo-budget" | "scripted-demo-privileged";

const claudeCommand = ["claude", "-p", "--output-format", "stream-json", "--verbose"];

const diagnoserPromptV1 = `You are a CI diagnoser for {{repository.name}}.

The check "{{pipeline.checkName}}" failed on {{ref.branch}} at {{ref.sha}}.
Failed job: {{job.name}}, step "{{job.step}}" (exit code {{job.exitCode}}).
Failure signature: {{failure.signature}}

Log excerpt:
{{logs.excerpt}}

Explain the root cause and write it to artifacts/diagnosis.md.`;

const diagnoserPromptV2 = `You are the CI diagnoser for {{repository.name}}, working on a {{task.kind}} task.

The check "{{pipeline.checkName}}" failed on branch {{ref.branch}} at {{ref.sha}}
(pull request #{{pullRequest.number}}: {{pullRequest.title}}).
Failed job: {{job.name}}, step "{{job.step}}", exit code {{job.exitCode}}.
Failure signature: {{failure.signature}}
Failing tests: {{failure.tests}}
Changed files: {{pullRequest.changedFiles}}

Log excerpt (bounded, secrets redacted):
\`\`\`
{{logs.excerpt}}
\`\`\`

1. Reproduce the failure in the workspace before changing anything.
2. Explain the root cause in two or three sentences, citing files and lines; write it to artifacts/diagnosis.md.
3. For a repair task, make the smallest change that fixes the cause (never skip or weaken a test),
   re-run the failing tests, and write \`git diff\` to artifacts/fix.patch. Ask the reviewer subagent to check it.
4. Never push, comment or rerun anything yourself: Airlock asks a maintainer to approve every write-back.`;

const scriptedPrompt = `Scripted demo fixer for {{repository.name}} (recorded scenario, not a live model).

Check "{{pipeline.checkName}}" failed at {{ref.sha}} on {{ref.branch}}.
Failing tests: {{failure.tests}}
Signature: {{failure.signature}}

{{logs.excerpt}}`;

// What the three scripted demo stacks share: the "sum-off-by-one" recording, its tools and
// prompt. Each stack adds what its scene is about (subagents, a cap, a privileged server). A
// version's digest is of the parsed spec's canonical JSON, so sharing this changes no digest:
// prisma/seed/stacks.test.ts pins them, since a seeded install keeps its stored versions
// (createMany skips duplicates) and a changed digest would disagree with its seeded runs.
const scriptedBase = {
  modelProvider: "local",
  model: "scripted",
  adapter: { kind: "scripted", scenario: "sum-off-by-one" },
  tools: ["Read", "Bash(npm test:*)", "Edit"],
  approvalMode: "always",
  promptTemplate: scriptedPrompt,
  limits: { wallClockMinutes: 5 },
} as const;

const releasePrompt = `You review release {{ref.tag}} of {{repository.name}} at {{ref.sha}} before it is published.

Artifacts produced by the release workflow:
{{artifacts.list}}

Check, and report in artifacts/release-readiness.md with a verdict per item:
- every artifact exists and its checksum matches SHA256SUMS;
- image tag, Helm chart version and appVersion, and npm package version all equal {{ref.tag}};
- release notes mention every merged pull request since the previous tag;
- deployment policy for {{repository.defaultBranch}} allows this release.
You cannot publish. Airlock asks a release manager to approve publishing.`;

const diagnoserBase = {
  modelProvider: "anthropic",
  // The Claude Code CLI built from the stack; its model API key is the secret granted by this
  // name (AIRLOCK_SECRET_ANTHROPIC_API_KEY on the server). Without it, admission refuses the run
  // and says what to set; the demo's own scenes run the scripted stack.
  adapter: { kind: "claude-code", apiKeySecret: "anthropic-api-key", maxTurns: 50 },
  mcpServers: [
    { name: "ci-history", transport: "stdio", target: "npx -y @airlock/mcp-ci-history --endpoint-from-config", configMaps: ["airlock-ci-endpoints"] },
    { name: "sentry", transport: "http", target: "https://mcp.sentry.dev/mcp", secrets: ["sentry-auth-token"], configMaps: ["sentry-org"], privileged: false },
  ],
  approvalMode: "always",
} as const;

type VersionSeed = { version: number; createdMinutesAgo: number; createdBy: DemoUserKey; spec: unknown };
type StackSeed = { name: StackName; description: string; versions: VersionSeed[] };

export const stacks: StackSeed[] = [
  {
    name: "claude-code-ci-diagnoser",
    description: "Claude Code in print mode: diagnoses failed checks and proposes minimal patches, with diagnoser, test-fixer and reviewer subagents.",
    versions: [
      {
        version: 1,
        createdMinutesAgo: 12 * 24 * 60,
        createdBy: "admin",
        spec: {
          ...diagnoserBase,
          model: "claude-sonnet-4-20250514",
          mcpServers: [diagnoserBase.mcpServers[0]],
          tools: ["Read", "Grep", "Glob", "Bash(npm test:*)", "Bash(npx vitest:*)", "Edit"],
          skills: ["ci-log-reading"],
          subagents: [
            { name: "diagnoser", role: "Reads the failing log window and the code it points at; names the root cause.", tools: ["Read", "Grep", "Bash(npm test:*)"] },
            { name: "test-fixer", role: "Makes the smallest change that turns the failing tests green.", tools: ["Read", "Edit", "Bash(npm test:*)"] },
          ],
          promptTemplate: diagnoserPromptV1,
          limits: { wallClockMinutes: 30, maxCostUsd: 3, maxRetries: 1 },
        },
      },
      {
        version: 2,
        createdMinutesAgo: 2 * 24 * 60,
        createdBy: "admin",
        spec: {
          ...diagnoserBase,
          model: "claude-sonnet-4-5",
          tools: ["Read", "Grep", "Glob", "Bash(npm test:*)", "Bash(npx vitest:*)", "Bash(pytest:*)", "Bash(go test:*)", "Bash(git diff:*)", "Edit", "Write"],
          skills: ["ci-log-reading", "minimal-patch", "flaky-test-triage"],
          subagents: [
            { name: "diagnoser", role: "Reads the failing log window and the code it points at; names the root cause with file and line.", tools: ["Read", "Grep", "Glob", "Bash(npm test:*)", "Bash(pytest:*)", "Bash(go test:*)"] },
            { name: "test-fixer", role: "Makes the smallest change that turns the failing tests green without weakening them.", tools: ["Read", "Edit", "Bash(npx vitest:*)", "Bash(pytest:*)", "Bash(go test:*)"] },
            { name: "reviewer", role: "Reviews the patch for scope, test weakening and behaviour changes before approval is requested.", tools: ["Read", "Bash(git diff:*)"] },
          ],
          promptTemplate: diagnoserPromptV2,
          limits: { wallClockMinutes: 30, maxCostUsd: 4, maxRetries: 2 },
        },
      },
    ],
  },
  {
    name: "scripted-demo-fixer",
    description: "Replays the recorded \"sum-off-by-one\" scenario for demo/calculator. Demo and tests only: no model is called.",
    versions: [
      {
        version: 1,
        createdMinutesAgo: 12 * 24 * 60,
        createdBy: "admin",
        spec: {
          ...scriptedBase,
          skills: ["minimal-patch"],
          subagents: [
            { name: "diagnoser", role: "Finds the failing assertion and the line that causes it.", tools: ["Read", "Bash(npm test:*)"] },
            { name: "test-fixer", role: "Applies the one-line fix and re-runs the tests.", tools: ["Edit", "Bash(npm test:*)"] },
          ],
          limits: { ...scriptedBase.limits, maxCostUsd: 0, maxRetries: 1 },
        },
      },
    ],
  },
  // The demo's cost-cap scene (server/forges/local/demo.ts forks the live demo run onto it): the
  // same recording, under a cap the recording's own usage passes, so the meter stops the session.
  {
    name: "scripted-demo-budget",
    description: "The \"sum-off-by-one\" recording under a $0.04 cost cap, which its usage passes: the session is stopped at the cap. Demo and tests only: no model is called.",
    versions: [
      {
        version: 1,
        createdMinutesAgo: 12 * 24 * 60,
        createdBy: "admin",
        spec: { ...scriptedBase, limits: { ...scriptedBase.limits, maxCostUsd: 0.04, maxRetries: 0 } },
      },
    ],
  },
  // The demo's privileged-capability scene (server/forges/local/demo.ts forks the live demo run
  // onto it): the same recording with an MCP server the stack marks privileged, so the attempt
  // waits for a person's approval of exactly what it will launch with. The scripted agent starts
  // no process and connects to no server; the approval, the hold and the launch are real.
  {
    name: "scripted-demo-privileged",
    description: "The \"sum-off-by-one\" recording with a privileged deploy-status MCP server: each attempt waits for a person to approve what it launches with. Demo and tests only: no model is called and the scripted agent connects to no server.",
    versions: [
      {
        version: 1,
        createdMinutesAgo: 12 * 24 * 60,
        createdBy: "admin",
        spec: {
          ...scriptedBase,
          mcpServers: [{ name: "deploy-status", transport: "stdio", target: "airlock-demo-deploy-status --read-only", secrets: [], configMaps: [], privileged: true, required: false }],
          limits: { ...scriptedBase.limits, maxCostUsd: 0, maxRetries: 1 },
        },
      },
    ],
  },
  {
    name: "release-reviewer",
    description: "Checks release artifacts, checksums and version alignment; produces a readiness report. Cannot publish.",
    versions: [
      {
        version: 1,
        createdMinutesAgo: 10 * 24 * 60,
        createdBy: "admin",
        spec: {
          modelProvider: "anthropic",
          model: "claude-sonnet-4-5",
          adapter: { kind: "command", command: claudeCommand, env: ["ANTHROPIC_API_KEY", "NPM_TOKEN"], outputFormat: "claude-stream-json" },
          tools: ["Read", "Grep", "Bash(sha256sum:*)", "Bash(helm show chart:*)", "Bash(npm view:*)", "Bash(crane digest:*)"],
          mcpServers: [{ name: "ci-history", transport: "stdio", target: "npx -y @airlock/mcp-ci-history --endpoint-from-config", configMaps: ["airlock-ci-endpoints"] }],
          skills: ["release-checklist", "semver-alignment"],
          subagents: [
            { name: "artifact-auditor", role: "Verifies every artifact against SHA256SUMS and the registry digests.", tools: ["Bash(sha256sum:*)", "Bash(crane digest:*)"] },
            { name: "changelog-reviewer", role: "Compares release notes with the merged pull requests since the previous tag.", tools: ["Read", "Grep"] },
          ],
          approvalMode: "always",
          promptTemplate: releasePrompt,
          limits: { wallClockMinutes: 20, maxCostUsd: 2, maxRetries: 1 },
        },
      },
    ],
  },
];

export type StackRef = { id: string; name: StackName; version: number; specs: Map<number, StackSpec> };
export type StackIds = Record<StackName, StackRef>;

/** The snapshot (and digest) a run of `stack` at `version` stores. */
export function snapshotOf(stack: StackRef, version = stack.version) {
  const spec = stack.specs.get(version);
  if (!spec) throw new Error(`seed: ${stack.name} has no version ${version}`);
  return { spec, ...stackSnapshot({ id: stack.id, name: stack.name, version, spec }) };
}

export async function seedStacks(db: PrismaClient, now: Date, users: Record<DemoUserKey, string>): Promise<StackIds> {
  await db.agentStack.createMany({
    data: stacks.map((s) => {
      const latest = s.versions.at(-1)!;
      return {
        name: s.name,
        description: s.description,
        version: latest.version,
        createdAt: minutesBefore(now, s.versions[0]!.createdMinutesAgo),
        updatedAt: minutesBefore(now, latest.createdMinutesAgo),
      };
    }),
    skipDuplicates: true,
  });
  const rows = await db.agentStack.findMany({ where: { name: { in: stacks.map((s) => s.name) } }, select: { id: true, name: true } });
  const refs = stacks.map((s): StackRef => {
    const row = rows.find((r) => r.name === s.name);
    if (!row) throw new Error(`seed: stack ${s.name} is missing`);
    const specs = new Map(s.versions.map((v) => [v.version, zStackSpec.parse(v.spec)]));
    // A stack edited since the seed has later versions; seeded runs cite the seeded ones.
    return { id: row.id, name: s.name, version: Math.max(...specs.keys()), specs };
  });
  await db.agentStackVersion.createMany({
    data: stacks.flatMap((s, i) =>
      s.versions.map((v) => {
        const ref = refs[i]!;
        const spec = ref.specs.get(v.version)!;
        const { digest } = stackSnapshot({ id: ref.id, name: s.name, version: v.version, spec });
        return { stackId: ref.id, version: v.version, spec, digest, createdById: users[v.createdBy], createdAt: minutesBefore(now, v.createdMinutesAgo) };
      }),
    ),
    skipDuplicates: true,
  });
  return Object.fromEntries(refs.map((r) => [r.name, r])) as StackIds;
}
