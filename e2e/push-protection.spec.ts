import { createHash, randomUUID } from "node:crypto";
import { createRun, e2eDb, repositoryOf } from "./db";
import { expect, signIn, test } from "./fixtures";

// Push protection on the approval screen, in a real browser: a patch in which redaction found a
// secret is shown redacted with its findings, Approve is refused with the reason, a maintainer
// cannot override, an admin overrides with a reason that is then shown to everyone, and only then
// can the write-back be approved. The stored form is what the worker writes (see
// server/domain/runs/artifact-content.ts): redacted text shown, original bytes withheld, the
// digest of the original bytes.

const ORIGINAL = ["--- a/config.env", "+++ b/config.env", "@@ -0,0 +1 @@", `+STRIPE_KEY=${["sk", "_live_", "4eC39HqLyjWDarjtT1zdp7dc"].join("")}`, ""].join("\n");
const SHOWN = ["--- a/config.env", "+++ b/config.env", "@@ -0,0 +1 @@", "+STRIPE_KEY=[REDACTED:stripe_key]", ""].join("\n");
const FINDINGS = [{ kind: "stripe_key", name: null, count: 1, reason: "Stripe secret or restricted key (sk_live_/rk_live_/sk_test_...)" }];

test("a patch with a secret: shown redacted, refused until an admin overrides with a reason", async ({ page, baseURL }) => {
  // Two people, the approval screen twice and the run page: more than the default budget under load.
  test.setTimeout(90_000);
  const db = await e2eDb();
  let approvalId = "";
  let runId = "";
  try {
    const repositoryId = await repositoryOf(db, "maintainer@airlock.local", "maintainer");
    runId = await createRun(db, { repositoryId, title: "Push protection e2e", status: "awaiting_approval" });
    const artifactId = `e2e${randomUUID().replaceAll("-", "").slice(0, 20)}`;
    const digest = `sha256:${createHash("sha256").update(ORIGINAL).digest("hex")}`;
    await db.query(
      `INSERT INTO "Artifact" ("id", "runId", "kind", "name", "content", "mediaType", "digest", "sizeBytes", "secretFindings", "withheldContent")
       VALUES ($1, $2, 'patch', 'fix.patch', $3, 'text/x-diff', $4, $5, $6, $7)`,
      [artifactId, runId, SHOWN, digest, Buffer.byteLength(ORIGINAL), JSON.stringify(FINDINGS), Buffer.from(ORIGINAL)],
    );
    approvalId = `e2e${randomUUID().replaceAll("-", "").slice(0, 20)}`;
    const note = "Push protection: the patch contains secrets (stripe_key ×1); it is shown redacted, and pushing it is refused unless an admin overrides with a reason.";
    // The shape request-write-back freezes (zPresented): the approval screen refuses any other.
    const presented = {
      prompt: "Fix the failing check.",
      promptHash: `sha256:${"0".repeat(64)}`,
      contextDigest: `sha256:${"1".repeat(64)}`,
      contextLabels: ["failed-log-window"],
      stack: { name: "e2e-stack", version: 1, digest: `sha256:${"2".repeat(64)}`, model: "anthropic/claude-sonnet-4-5", adapter: "scripted", tools: [], mcpServers: [], skills: [], subagents: [], approvalMode: "always" },
      runnerPool: null,
      runtimeServiceAccount: null,
      runnerServiceAccount: null,
      secrets: { granted: [], denied: [] },
      configMaps: { granted: [], denied: [] },
      action: "push_commits",
      target: { repository: "e2e/repository", branch: "e2e/branch", headSha: "e".repeat(40) },
      artifact: { id: artifactId, kind: "patch", name: "fix.patch", digest, sizeBytes: Buffer.byteLength(ORIGINAL) },
      message: null,
      labels: null,
      reason: `Every push needs approval. ${note}`,
      exception: null,
      pushProtection: { findings: FINDINGS, note },
    };
    await db.query(
      `INSERT INTO "ApprovalRequest" ("id", "runId", "action", "targetBranch", "targetHeadSha", "artifactId", "artifactDigest", "presented", "status", "expiresAt")
       VALUES ($1, $2, 'push_commits', 'e2e/branch', $3, $4, $5, $6, 'pending', now() + interval '1 day')`,
      [approvalId, runId, "e".repeat(40), artifactId, digest, JSON.stringify(presented)],
    );
  } finally {
    await db.end();
  }

  // A maintainer sees the findings and the redacted patch, and cannot approve or override.
  await signIn(page, baseURL!, "user_maintainer");
  await page.goto(`/approvals/${approvalId}`);
  const panel = page.getByRole("region", { name: "Push protection" });
  await expect(panel).toContainText("this patch contains secrets");
  await expect(page.getByTestId("push-protection-findings")).toContainText("stripe_key ×1");
  await expect(panel).toContainText("Only an admin of the repository can override it.");
  await expect(page.getByRole("region", { name: "Artifact" })).toContainText("[REDACTED:stripe_key]");
  await expect(page.locator("body")).not.toContainText("4eC39HqLyjWDarjtT1zdp7dc");
  const approve = page.getByRole("region", { name: "Requested action" }).getByRole("button", { name: "Approve" });
  await expect(approve).toBeDisabled();

  // The run page's own Approve buttons (footer and right pane) say the same, before anyone clicks.
  await page.goto(`/runs/${runId}`);
  for (const region of ["Run controls", "Approvals"]) {
    const button = page.getByRole("region", { name: region }).getByRole("button", { name: "Approve" });
    await expect(button).toHaveAttribute("aria-disabled", "true");
    await expect(button).toHaveAccessibleDescription(/Push protection: the patch contains secrets; an admin must override it/);
  }

  // An admin overrides with a reason; it is shown, and Approve opens.
  await signIn(page, baseURL!, "user_admin");
  await page.goto(`/approvals/${approvalId}`);
  await page.getByRole("button", { name: "Override push protection…" }).click();
  await page.getByLabel(/Reason \(required, recorded/).fill("test-mode key in a fixture, rotated");
  await page.getByRole("button", { name: "Override", exact: true }).click();
  await expect(page.getByTestId("push-protection-override")).toContainText("Overridden by admin@airlock.local");
  await expect(page.getByTestId("push-protection-override")).toContainText("test-mode key in a fixture, rotated");
  await expect(approve).toBeEnabled();
  await approve.click();
  await expect(page.getByText("Approved: the write-back is executing")).toBeVisible();
});
