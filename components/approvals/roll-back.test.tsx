import { renderToStaticMarkup } from "react-dom/server";
import { describe, expect, it } from "vitest";
import { RollBackView } from "./roll-back";

// A roll-back approval says which failed deploy it undoes and how: the revert diff it commits, or
// the good deploy it reruns (nothing committed).

const base = { triageId: "tr_1", failingSha: "f".repeat(40), failingPipelineId: "p_2", failingCheck: "Deploy / production", branch: "main" };

describe("RollBackView", () => {
  it("shows a revert's diff and the branch it lands on", () => {
    const patch = "diff --git a/config.js b/config.js\n--- a/config.js\n+++ b/config.js\n@@ -1 +1 @@\n-export const replicas = 0;\n+export const replicas = 3;\n";
    const html = renderToStaticMarkup(<RollBackView rollBack={{ ...base, mode: "revert", good: null }} message={'Revert "Scale down"'} artifact={{ name: "revert-ffff.patch", kind: "patch", mediaType: "text/x-diff", content: patch }} artifactDigest="sha256:d" />);
    expect(html).toContain("Revert the failing deploy&#x27;s change");
    expect(html).toContain(`Deploy / production at ${"f".repeat(40)}`);
    expect(html).toContain(`aria-label="config.js"`);
    expect(html).toContain("replicas");
    expect(html).not.toContain("not a unified diff");
  });

  it("shows the good deploy a rerun runs again, and that nothing is committed", () => {
    const html = renderToStaticMarkup(
      <RollBackView rollBack={{ ...base, mode: "rerun_last_good", good: { pipelineId: "p_1", sha: "a".repeat(40), branch: "main", externalId: "7001", url: null } }} message={null} artifact={null} artifactDigest={null} />,
    );
    expect(html).toContain("Rerun the last good deploy");
    expect(html).toContain(`${"a".repeat(40)} (run 7001 on main)`);
    expect(html).toContain("Nothing is committed");
  });
});
