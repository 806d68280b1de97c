import type { Presented } from "@/server/domain/approvals/schemas";

/** A release review's publish_release request as the approval screen's tests render it. */
export const releaseRequest: Presented = {
  prompt: "Review the release.",
  promptHash: "sha256:p",
  contextDigest: "sha256:c",
  contextLabels: [],
  stack: { name: "release-reviewer", version: 1, digest: "sha256:s", model: null, adapter: "scripted", tools: [], mcpServers: [], skills: [], subagents: [], approvalMode: "always" },
  runnerPool: null,
  runtimeServiceAccount: null,
  runnerServiceAccount: null,
  secrets: { granted: [], denied: [] },
  configMaps: { granted: [], denied: [] },
  action: "publish_release",
  target: { repository: "acme/web-console", branch: "v2.14.0", headSha: "a".repeat(40) },
  artifact: { id: "art_1", kind: "report", name: "release-review.md", digest: "sha256:r", sizeBytes: 40 },
  message: null,
  labels: null,
  reason: "publishing a release is privileged",
  exception: null,
  pushProtection: null,
};
