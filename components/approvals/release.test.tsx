import { renderToStaticMarkup } from "react-dom/server";
import { describe, expect, it } from "vitest";
import type { Presented } from "@/server/domain/approvals/schemas";
import { ReleaseView } from "./release";
import { releaseRequest } from "./test-fixtures";

// A release approval names a tag and shows its readiness report, never a diff: a seeded request
// (its report bound as the artifact, no frozen release) and one made by requestPublishRelease.


describe("ReleaseView", () => {
  it("shows a seeded release request's tag and its report as Markdown, not as a branch or a diff", () => {
    const html = renderToStaticMarkup(
      <ReleaseView presented={releaseRequest} artifact={{ name: "release-review.md", kind: "report", mediaType: "text/markdown", content: "# Readiness\n\n- chart appVersion lags" }} artifactDigest="sha256:r" headSha={"a".repeat(40)} />,
    );
    expect(html).toContain('data-testid="release-tag">v2.14.0<');
    expect(html).not.toContain("branch v2.14.0");
    expect(html).not.toContain("not a unified diff");
    expect(html).toContain(">Readiness</p>");
    expect(html).toContain("chart appVersion lags");
  });

  it("shows the frozen release: notes byte for byte, the report and the published artifact's digest", () => {
    const presented: Presented = {
      ...releaseRequest,
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
