import { renderToStaticMarkup } from "react-dom/server";
import { describe, expect, it } from "vitest";
import type { Presented } from "@/server/domain/approvals/schemas";
import { PresentedSections } from "./presented-sections";
import { releaseRequest } from "./test-fixtures";

// A release_gap approval shows exactly the gap it accepts (what is wrong, in which release, at
// which commit), and that nothing is written to the forge: no artifact, no diff, no words posted.

const presented: Presented = {
  ...releaseRequest,
  action: "release_gap",
  target: { repository: "acme/web", branch: "v2.1.0", headSha: "a".repeat(40) },
  artifact: null,
  reason: "Readiness gap in v2.1.0",
  releaseGap: {
    id: "checksum_mismatch:airlock-2.1.0.tgz",
    kind: "checksum_mismatch",
    subject: "airlock-2.1.0.tgz",
    detail: "SHA256SUMS says airlock-2.1.0.tgz is sha256:00; the artifact shipped is sha256:11",
    tag: "v2.1.0",
    version: "2.1.0",
    commitSha: "a".repeat(40),
    ruleName: "release-readiness",
  },
};

describe("a release gap on the approval screen", () => {
  it("shows the gap, the release and its commit, and says nothing is written", () => {
    const html = renderToStaticMarkup(<PresentedSections approval={{ action: "release_gap", presented, targetPrNumber: null, artifactDigest: null, artifact: null }} presented={presented} />);
    expect(html).toContain("Readiness gap: Checksum mismatch");
    expect(html).toContain('data-testid="release-gap-detail">SHA256SUMS says airlock-2.1.0.tgz is sha256:00; the artifact shipped is sha256:11<');
    expect(html).toContain(`v2.1.0 (version 2.1.0) at ${"a".repeat(40)}`);
    expect(html).toContain("nothing is written to the forge");
    expect(html).not.toContain('aria-label="Artifact"');
  });
});
