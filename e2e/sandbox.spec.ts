import { randomUUID } from "node:crypto";
import { createRun, repositoryOf, e2eDbForSpec } from "./db";
import { demoUser, expect, signIn, test } from "./fixtures";

// What the run view and the pool page say about the sandbox, from what a worker records: the
// right pane's sandbox section (kind, network and allowed hosts, limits, blocked connections,
// the limit that ended the attempt), the run header's warning for an unsandboxed attempt, and
// the pool page's warning for a pool allowed to run without one.

const database = e2eDbForSpec();

const limits = { memoryMb: 4096, processes: 512, cpuSeconds: 3600, diskMb: 10240 };

/** A failed attempt with its sandbox events, as the worker appends them. */
async function attemptWith(runId: string, payloads: Record<string, unknown>[], exitReason: string) {
  const db = database();
  const attemptId = `e2e${randomUUID().replaceAll("-", "").slice(0, 20)}`;
  await db.query(
    `INSERT INTO "DispatchAttempt" ("id", "runId", "number", "status", "fencingToken", "startedAt", "finishedAt", "exitReason") VALUES ($1, $2, 1, 'failed', 1, now(), now(), $3)`,
    [attemptId, runId, exitReason],
  );
  for (const [i, payload] of payloads.entries()) {
    await db.query(`INSERT INTO "RunEvent" ("runId", "seq", "type", "payload", "attemptId") VALUES ($1, $2, 'sandbox', $3, $4)`, [runId, i + 1, JSON.stringify(payload), attemptId]);
  }
  await db.query(`UPDATE "AgentDispatchRun" SET "lastEventSeq" = $2, "status" = 'failed' WHERE "id" = $1`, [runId, payloads.length]);
}

test("the run view shows the sandbox: network, hosts, limits, blocked connections and the limit that ended it", async ({ page, baseURL }) => {
  const db = database();
  const runId = await createRun(db, { repositoryId: await repositoryOf(db, demoUser("user_maintainer").email, "maintainer"), title: "Sandboxed e2e", status: "failed" });
  const reason = "killed: memory limit 4 GiB (4.1 GiB in use)";
  await attemptWith(
    runId,
    [
      { phase: "started", kind: "bubblewrap", unsandboxedReason: null, network: { mode: "restricted", allowedHosts: ["api.anthropic.com", "registry.npmjs.org"] }, limits, user: "uid 1000, not root, in its own user namespace" },
      { phase: "blocked", host: "evil.example", port: 443, at: "2026-12-01T10:00:01.000Z", reason: "not in the allowlist" },
      { phase: "blocked", host: "<img src=x onerror=alert(1)>", port: 80, at: "2026-12-01T10:00:02.000Z", reason: "not in the allowlist" },
      { phase: "ended", limit: "memory", reason, peakMemoryMb: 4200, peakProcesses: 12, cpuSeconds: 3.2, blockedConnections: 2 },
    ],
    reason,
  );
  await signIn(page, baseURL!, "user_maintainer");
  await page.goto(`/runs/${runId}`);
  const pane = page.getByRole("region", { name: "Sandbox" });
  await expect(pane).toContainText("bubblewrap");
  await expect(pane).toContainText("restricted");
  await expect(pane).toContainText("api.anthropic.com");
  await expect(pane).toContainText("4 GiB memory · 512 processes · 3600 s CPU · 10 GiB disk");
  await expect(pane).toContainText("Blocked connections (2)");
  await expect(pane).toContainText("evil.example:443");
  // A hostile host name is text, never markup.
  await expect(pane).toContainText("<img src=x onerror=alert(1)>:80");
  await expect(pane.locator("img")).toHaveCount(0);
  await expect(pane.getByRole("alert")).toContainText(`Ended by its memory limit 4 GiB: ${reason}`);
  await expect(page.getByRole("alert").filter({ hasText: "ran without a sandbox" })).toHaveCount(0);
});

test("the run header warns when an attempt ran without a sandbox, with the admin setting that allowed it", async ({ page, baseURL }) => {
  const db = database();
  const runId = await createRun(db, { repositoryId: await repositoryOf(db, demoUser("user_maintainer").email, "maintainer"), title: "Unsandboxed e2e", status: "failed" });
  const why = "sandbox unavailable: install bubblewrap; an admin allowed pool trusted-local to run unsandboxed";
  await attemptWith(runId, [{ phase: "started", kind: "none", unsandboxedReason: why, network: { mode: "open", allowedHosts: [] }, limits: null, user: null }], "`node` exited with code 1");
  await signIn(page, baseURL!, "user_maintainer");
  await page.goto(`/runs/${runId}`);
  await expect(page.getByRole("alert").filter({ hasText: "ran without a sandbox" })).toContainText(`Attempt 1 ran without a sandbox: ${why}.`);
  await expect(page.getByRole("region", { name: "Sandbox" })).toContainText("no sandbox");
});

test("the pool page shows each pool's sandbox and warns about one allowed to run unsandboxed", async ({ page, baseURL }) => {
  const db = database();
  const name = `unsandboxed-${randomUUID().slice(0, 8)}`;
  const { rows } = await db.query<{ id: string }>(`SELECT "id" FROM "ServiceAccount" WHERE "privileged" = false LIMIT 1`);
  await db.query(
    `INSERT INTO "RunnerPool" ("id", "name", "trustTier", "kind", "runtimeServiceAccountId", "runnerServiceAccountId", "networkMode", "allowedHosts", "allowUnsandboxed", "updatedAt")
     VALUES ($1, $2, 'trusted', 'local', $3, $3, 'restricted', ARRAY['registry.npmjs.org'], true, now())`,
    [`e2e${randomUUID().replaceAll("-", "").slice(0, 20)}`, name, rows[0]!.id],
  );
  try {
    await signIn(page, baseURL!, "user_admin");
    await page.goto("/settings/pools");
    const row = page.getByRole("table", { name: "Runner pools" }).getByRole("row").filter({ hasText: name });
    await expect(row).toContainText("network restricted (registry.npmjs.org)");
    await expect(row).toContainText("may run unsandboxed");
    await page.getByRole("button", { name: `Edit pool ${name}` }).click();
    const dialog = page.getByRole("dialog");
    await expect(dialog.getByLabel("Network")).toHaveValue("restricted");
    await expect(dialog.getByRole("alert")).toContainText("may run unsandboxed");
  } finally {
    await db.query(`DELETE FROM "RunnerPool" WHERE "name" = $1`, [name]);
  }
});
