import { renderToStaticMarkup } from "react-dom/server";
import { describe, expect, it } from "vitest";
import type { Presented } from "@/server/domain/approvals/schemas";
import { ReleaseView } from "./release";

// A release approval names a tag and shows its readiness report, never a diff: a seeded request
// (its report bound as the artifact, no frozen release) and one made by requestPublishRelease.

const base: Presented = {
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

describe("ReleaseView", () => {
  it("shows a seeded release request's tag and its report as Markdown, not as a branch or a diff", () => {
    const html = renderToStaticMarkup(
      <ReleaseView presented={base} artifact={{ name: "release-review.md", kind: "report", mediaType: "text/markdown", content: "# Readiness\n\n- chart appVersion lags" }} artifactDigest="sha256:r" headSha={"a".repeat(40)} />,
    );
    expect(html).toContain('data-testid="release-tag">v2.14.0<');
    expect(html).not.toContain("branch v2.14.0");
    expect(html).not.toContain("not a unified diff");
    expect(html).toContain(">Readiness</p>");
    expect(html).toContain("chart appVersion lags");
  });

  it("shows the frozen release: notes byte for byte, the report and the published artifact's digest", () => {
    const presented: Presented = {
      ...base,
      release: {
        tag: "v2.14.0",
        commitSha: "b".repeat(40),
        name: "v2.14.0",
        notes: "Release v2.14.0.\n\n- Artifact: `checksums.txt` sha256:x (12 bytes)",
        artifact: { id: "art_2", name: "checksums.txt", digest: "sha256:x", sizeBytes: 12 },
        report: { id: "art_1", name: "readiness.md", digest: "sha256:r", content: "# Ready <script>alert(1)</script>" },
      },
    };
    const html = renderToStaticMarkup(<ReleaseView presented={presented} artifact={{ name: "checksums.txt", kind: "log", mediaType: "text/plain", content: "abc" }} artifactDigest="sha256:x" headSha={null} />);
    expect(html).toContain("checksums.txt sha256:x (12 bytes)");
    expect(html).toContain("Release v2.14.0.\n\n- Artifact: `checksums.txt` sha256:x (12 bytes)");
    expect(html).toContain("b".repeat(40));
    expect(html).not.toContain("<script>");
  });
});
