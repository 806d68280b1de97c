import type { Command } from "./types";

// Content of the triage and release-review sessions: what the agent runs and
// the Markdown reports it produces.

export type ReportCase = {
  opening: string;
  commands: Command[];
  subagents: { name: string; task: string; command: Command; summary: string }[];
  report: { name: string; content: string };
  closing: string;
};

export function flakyTriage(opts: { repo: string; night: string; signature: string; fails: number; runs: number; newSuspect: boolean }): ReportCase {
  const rate = ((opts.fails / opts.runs) * 100).toFixed(1);
  return {
    opening: `Nightly flaky-test scan for \`${opts.repo}\` (\`main\`, last 7 days, ${opts.runs} pipeline runs). Grouping failures by signature, then checking which ones also pass on retry or on the same commit.`,
    commands: [
      {
        command: "airlock-ci-history failures --branch main --since 7d --group-by signature --format table",
        description: "Group recent failures by signature",
        output: `signature          job    test                                                  fails  passes_same_sha
${opts.signature}  e2e    settings › saves notification preferences            ${String(opts.fails).padStart(5)}  ${String(opts.fails - 1).padStart(15)}
9b3e11f07aa2c580  e2e    runs › streams the transcript after reconnect            2                2
44d0e6c1b9f2a7e3  unit   approvals › expires pending approvals at the deadline    1                0`,
        ms: 2_300,
      },
    ],
    subagents: [
      {
        name: "diagnoser",
        task: "Classify each signature: flaky (passes on the same SHA) or broken.",
        command: {
          command: "airlock-ci-history runs --signature 44d0e6c1b9f2a7e3 --show-commits",
          description: "Check whether the unit failure is deterministic",
          output: "run 9919650127  sha 71c2e0d  failure  (only occurrence; fixed by 3c9d1f4 \"use the injected clock in expireApprovals\")",
          ms: 1_100,
        },
        summary: `2 flaky signatures (settings e2e, transcript reconnect e2e); 1 broken-then-fixed unit failure (no action).${opts.newSuspect ? " The transcript reconnect test is new this week." : ""}`,
      },
    ],
    report: {
      name: "flaky-triage.md",
      content: `# Flaky test triage: ${opts.repo} \`main\`, ${opts.night}

Window: last 7 days · ${opts.runs} pipeline runs · 3 failure signatures

| signature | test | fail rate | passes on same SHA | suspected cause | owner | confidence |
| --- | --- | --- | --- | --- | --- | --- |
| \`${opts.signature.slice(0, 8)}\` | \`e2e/settings.spec.ts:41\` saves notification preferences | ${rate}% (${opts.fails}/${opts.runs}) | yes | refetch-on-focus resets the form mid-edit | @acme/web-console-settings | high |
| \`9b3e11f0\` | \`e2e/runs.spec.ts:88\` streams the transcript after reconnect | ${((2 / opts.runs) * 100).toFixed(1)}% (2/${opts.runs}) | yes | SSE reconnect races the backlog query under load | @acme/web-console-runs | medium |
| \`44d0e6c1\` | \`approvals › expires pending approvals at the deadline\` | 1 run | no | real bug, fixed in 3c9d1f4 | n/a | high |

## Recommended actions

1. **settings e2e**: not a test problem: a user edit can be discarded by a background refetch. Track as a bug; quarantining the test would hide it.
2. **transcript reconnect e2e**: add \`expect.poll\` on the last event id instead of a fixed wait; ask the runs owners to check \`Last-Event-ID\` handling.
3. **approvals unit**: nothing to do.

No work items were created: the repository policy allows findings on the saved triage view only.
`,
    },
    closing: `Triage saved: 2 flaky signatures, 1 fixed failure. The settings e2e flake (${rate}%) is a real product bug; details in \`flaky-triage.md\`.`,
  };
}

export function releaseReview(opts: { repo: string; tag: string; previous: string; chartAppVersion: string; merged: string[]; missingNotes: string[] }): ReportCase {
  const version = opts.tag.replace(/^v/, "");
  const name = opts.repo.split("/")[1] ?? opts.repo;
  const chartOk = opts.chartAppVersion === version;
  const notesOk = opts.missingNotes.length === 0;
  const ready = chartOk && notesOk;
  return {
    opening: `Reviewing release \`${opts.tag}\` of \`${opts.repo}\`: artifact completeness, checksums, version alignment across image, chart and npm package, and release notes since \`${opts.previous}\`.`,
    commands: [
      {
        command: "sha256sum -c SHA256SUMS",
        description: "Verify artifact checksums",
        output: `${name}-${version}.tgz: OK\n${name}-sdk-${version}.tgz: OK\nsbom.spdx.json: OK\n${name}-linux-amd64.tar.zst: OK`,
        ms: 900,
      },
      {
        command: `helm show chart ${name}-${version}.tgz`,
        description: "Read the chart metadata",
        output: `apiVersion: v2\nname: ${name}\nversion: ${version}\nappVersion: "${opts.chartAppVersion}"\ntype: application`,
        ms: 420,
      },
    ],
    subagents: [
      {
        name: "artifact-auditor",
        task: "Compare registry digests with the release workflow's outputs.",
        command: {
          command: `crane digest ghcr.io/acme/${name}:${version}`,
          description: "Resolve the image digest",
          output: "sha256:6f1d0c3e9a7b2f48d5e0c1a9b7e3f2d4c8a6b1e0f9d3c7a5b2e8f1d4c6a9b3e7",
          ms: 1_300,
        },
        summary: "Image digest matches the workflow output; all 4 checksums verify.",
      },
      {
        name: "changelog-reviewer",
        task: `List merged PRs since ${opts.previous} missing from the release notes.`,
        command: {
          command: `git log --merges --format='%s' ${opts.previous}..${opts.tag}`,
          description: "List merged pull requests",
          output: opts.merged.join("\n"),
          ms: 300,
        },
        summary: notesOk ? "Release notes cover every merged PR." : `Release notes miss ${opts.missingNotes.join(", ")}.`,
      },
    ],
    report: {
      name: "release-readiness.md",
      content: `# Release readiness: ${opts.repo} ${opts.tag}

**Verdict: ${ready ? "ready to publish" : "not ready: fix the items marked ✗ or approve with an exception"}**

| check | result | detail |
| --- | --- | --- |
| Artifacts present (image, chart, SDK tarball, SBOM) | ✓ | 4 of 4 |
| Checksums (\`SHA256SUMS\`) | ✓ | all 4 verify |
| Image \`ghcr.io/acme/${name}:${version}\` | ✓ | digest matches workflow output |
| Chart \`version\` | ✓ | ${version} |
| Chart \`appVersion\` | ${chartOk ? "✓" : "✗"} | ${opts.chartAppVersion}${chartOk ? "" : ` (expected ${version}: \`chart/Chart.yaml\` was not bumped)`} |
| npm \`@acme/${name}-sdk\` | ✓ | ${version} (dry run) |
| Release notes | ${notesOk ? "✓" : "✗"} | ${notesOk ? "cover every merged PR" : `missing ${opts.missingNotes.join(", ")}`} |
| Deployment policy (\`main\`, tag \`v*\`) | ✓ | publishing requires an approved release manager |

Publishing is a privileged write-back (NPM_TOKEN, GitHub release): it waits for approval.
`,
    },
    closing: ready
      ? `\`${opts.tag}\` is ready: every artifact verifies and versions align. Requesting approval to publish.`
      : `\`${opts.tag}\` is **not ready**: ${[chartOk ? null : `chart appVersion is ${opts.chartAppVersion}`, notesOk ? null : `release notes miss ${opts.missingNotes.join(", ")}`].filter(Boolean).join("; ")}. Report in \`release-readiness.md\`; publishing needs an approval either way.`,
  };
}
