// The redaction corpus (every shape, plain, ANSI-glued and split four ways, and in a key) sent in
// through every door text comes in by, on a fork run with no grants: the agent's stdout, its
// events, a tool call's keys, stderr, its artifacts (a diagnosis, a report, a patch), a signed
// webhook payload and attached context. Then every text and JSON column of every table is read
// and searched the way a person would see it (as stored, as a terminal shows it, as markdown
// renders it): zero hits. The patch is pushed only after an admin's recorded override, and what is
// pushed is exactly what was approved.
import { beforeAll, describe, expect, it } from "vitest";

process.env.GITHUB_WEBHOOK_SECRET = "webhook-secret-for-corpus-tests";

const { getDb } = await import("@/server/db");
const { callerFor, createUser } = await import("@/server/testing/factories");
const { createExecRun, createLocalRepository, createPool, createStack, drain, scriptedSpec, testWorkerContext } = await import("@/server/queue/testing/fixtures");
const { dispatchRunTask } = await import("@/server/queue/tasks/dispatch-run");
const { executeWriteBackTask } = await import("@/server/queue/tasks/execute-write-back");
const { pullRequestEvent } = await import("@/server/domain/ingest/fixtures/deliveries");
const { deliver } = await import("@/server/domain/evaluation/fixtures/harness");
const { sha } = await import("@/server/domain/ingest/fixtures/world");
const { contentDigest } = await import("@/server/lib/digest");
const { DISGUISES, SECRET_SHAPES, secretPart, showsWhole } = await import("./testing/corpus");

const db = getDb();
const disguised = SECRET_SHAPES.flatMap((s) => DISGUISES.map((d) => d.apply(s.value)));
const keyed = Object.fromEntries(SECRET_SHAPES.map((s, i) => [`${i % 2 ? "\u001b[33m" : ""}${s.value}`, s.name]));
// A patch that adds every shape, plain, to the README: what an agent that "fixed" config would push.
const patchLines = SECRET_SHAPES.flatMap((s) => s.value.split("\n"));
const PATCH = ["--- a/README.md", "+++ b/README.md", "@@ -1 +1," + (patchLines.length + 1) + " @@", " x", ...patchLines.map((l) => `+${l}`), ""].join("\n");

/** Every string (keys too) in every text-like column of every table, public and the queue's. */
async function leaks(): Promise<string[]> {
  const columns = await db.$queryRaw<{ table_schema: string; table_name: string; column_name: string }[]>`
    SELECT c.table_schema, c.table_name, c.column_name
    FROM information_schema.columns c JOIN information_schema.tables t ON t.table_schema = c.table_schema AND t.table_name = c.table_name
    WHERE c.table_schema IN ('public', 'graphile_worker') AND t.table_type = 'BASE TABLE'
      AND c.data_type IN ('text', 'character varying', 'json', 'jsonb', 'ARRAY')`;
  expect(columns.length).toBeGreaterThan(50);
  const found = new Set<string>();
  for (const c of columns) {
    const rows = await db.$queryRawUnsafe<{ v: unknown }[]>(`SELECT to_jsonb("${c.column_name}") AS v FROM "${c.table_schema}"."${c.table_name}" WHERE "${c.column_name}" IS NOT NULL`);
    for (const { v } of rows) {
      for (const text of strings(v)) {
        for (const shape of SECRET_SHAPES) if (showsWhole(text, secretPart(shape.value))) { found.add(`${c.table_schema}.${c.table_name}.${c.column_name}: ${shape.name}`); }
      }
    }
  }
  return [...found].sort();
}

function strings(v: unknown): string[] {
  const out: string[] = [];
  const stack = [v];
  while (stack.length > 0) {
    const x = stack.pop();
    if (typeof x === "string") out.push(x);
    else if (Array.isArray(x)) stack.push(...x);
    else if (x && typeof x === "object") for (const [k, inner] of Object.entries(x)) stack.push(k, inner);
  }
  return out;
}

let runId: string;
let approvalId: string;
let maintainer: Awaited<ReturnType<typeof createUser>>;
let admin: Awaited<ReturnType<typeof createUser>>;
let local: Awaited<ReturnType<typeof createLocalRepository>>;
let ctx: ReturnType<typeof testWorkerContext>;
let agentCommand: string[];

beforeAll(async () => {
  maintainer = await createUser();
  admin = await createUser();
  // The agent and its corpus are the repository's own files, as a fork's code would be: the
  // sandbox shows the agent its workspace and nothing of the host's data folder.
  const agentSource = `const fs = require("node:fs");
const { disguised, keyed, patch } = JSON.parse(fs.readFileSync("corpus.json", "utf8"));
const ev = (e) => process.stdout.write(JSON.stringify(e) + "\\n");
for (const s of disguised) {
  process.stdout.write("stdout: " + s + "\\n");
  process.stderr.write("stderr: " + s + "\\n");
  ev({ type: "message", payload: { role: "assistant", text: "message: " + s } });
}
ev({ type: "tool_call", payload: { id: "t1", name: "Bash", startedAt: "2026-01-05T09:00:00Z", input: { env: keyed, command: disguised.join(" ") } } });
ev({ type: "tool_result", payload: { toolCallId: "t1", output: disguised.join("\\n"), isError: false } });
const dir = process.env.AIRLOCK_ARTIFACTS_DIR;
fs.writeFileSync(dir + "/diagnosis.md", "# Diagnosis\\n" + disguised.join("\\n"));
fs.writeFileSync(dir + "/report.json", JSON.stringify({ keyed, disguised }));
fs.writeFileSync(dir + "/fix.patch", patch);
`;
  local = await createLocalRepository({
    files: { "README.md": "x\n", "leaky-agent.cjs": agentSource, "corpus.json": JSON.stringify({ disguised, keyed, patch: PATCH }) },
    members: [[maintainer, "maintainer"], [admin, "admin"]],
  });
  const pool = await createPool({ trustTier: "untrusted" });
  await db.runnerPool.deleteMany({ where: { id: { not: pool.id } } });
  // No grants at all: token shapes alone must catch everything.
  agentCommand = ["node", "leaky-agent.cjs"];
  const stack = await createStack(scriptedSpec({ adapter: { kind: "command", command: agentCommand, env: [], outputFormat: "airlock" } }));
  ctx = testWorkerContext({ dataDir: local.dataDir });
  const run = await createExecRun({ repositoryId: local.repository.id, stack, sha: local.sha, actorUserId: maintainer.id, isFork: true });
  runId = run.id;
  await dispatchRunTask({ runId }, ctx);
  await drain(ctx);
});

describe("no secret shape is stored anywhere, on a fork run with no grants", () => {
  it("through the transcript, the artifacts, a webhook payload and attached context", async () => {
    const run = await db.agentDispatchRun.findUniqueOrThrow({ where: { id: runId }, include: { approvals: true, artifacts: true } });
    expect(run.admission).toMatchObject({ trustTier: "untrusted", secretsGranted: [] });
    expect(run.status).toBe("awaiting_approval");
    approvalId = run.approvals[0]!.id;

    // A stranger's PR body and payload keys through the signed webhook.
    await deliver(db, {
      ...pullRequestEvent({ repo: local.repository.fullName, action: "opened", number: 77, title: `leak ${disguised[0]}`, body: disguised.join("\n"), headRef: "feature/leak", headSha: sha("leak") }),
    });
    const withKeys = pullRequestEvent({ repo: local.repository.fullName, action: "edited", number: 77, title: "keys", body: "see keys", headRef: "feature/leak", headSha: sha("leak") });
    await deliver(db, { ...withKeys, payload: { ...withKeys.payload, extra: keyed } });
    // A maintainer pastes everything as context.
    await callerFor(maintainer).runs.attachContext({ runId, attachmentId: crypto.randomUUID(), kind: "note", title: `pasted ${disguised[1]}`, url: "", path: "", startLine: "", text: disguised.join("\n") });

    expect(await leaks()).toEqual([]);

    // And the run says what was masked, by rule and count.
    const events = await db.runEvent.findMany({ where: { runId }, orderBy: { seq: "asc" } });
    const notes = events.filter((e) => e.type === "log" && (e.payload as { stream: string }).stream === "system").map((e) => (e.payload as { text: string }).text);
    expect(notes.find((t) => t.startsWith("Masked in the agent's output: "))).toMatch(/anthropic_key ×\d+.*github_token ×\d+/);
    expect(notes.some((t) => t.startsWith("Masked in diagnosis.md: "))).toBe(true);
    expect(notes.some((t) => t.startsWith("Push protection: the patch fix.patch contains secrets"))).toBe(true);
  });

  it("the patch is shown redacted with its findings, approval and push are refused until an admin overrides, then the approved bytes are pushed", async () => {
    const patch = await db.artifact.findFirstOrThrow({ where: { runId, kind: "patch" } });
    // The digest names the original bytes; the readable column holds the redacted text.
    expect(patch.digest).toBe(contentDigest(PATCH));
    expect(patch.content).toContain("[REDACTED:");
    expect(Buffer.from(patch.withheldContent!).toString("utf8")).toBe(PATCH);

    const detail = await callerFor(maintainer).approvals.byId({ approvalId });
    expect(detail.pushProtection?.findings.length).toBeGreaterThan(5);
    expect(detail.pushProtection?.override).toBeNull();
    expect(JSON.stringify(detail)).not.toContain(SECRET_SHAPES[0]!.value);

    const approve = (user: typeof maintainer) => callerFor(user).approvals.approve({ approvalId, artifactDigest: patch.digest, headSha: local.sha });
    await expect(approve(admin)).rejects.toMatchObject({ code: "PRECONDITION_FAILED", message: expect.stringMatching(/^Push protection: /) });
    await expect(callerFor(maintainer).approvals.overridePushProtection({ approvalId, reason: "I want it" })).rejects.toMatchObject({ code: "FORBIDDEN" });
    await expect(callerFor(admin).approvals.overridePushProtection({ approvalId, reason: "   " })).rejects.toMatchObject({ code: "BAD_REQUEST" });
    const reason = `fixture keys for the test suite, revoked ${SECRET_SHAPES[9]!.value}`;
    const { override } = await callerFor(admin).approvals.overridePushProtection({ approvalId, reason });
    expect(override).toMatchObject({ by: admin.email, reason: expect.stringContaining("[REDACTED:") });
    expect(await db.auditEntry.count({ where: { objectId: approvalId, action: "approval.push_protection_override" } })).toBe(1);
    const shown = await callerFor(maintainer).approvals.byId({ approvalId });
    expect(shown.pushProtection?.override).toMatchObject({ by: admin.email });

    // The maintainer who triggered the run may not approve under a two-person rule; the admin can.
    const { writeBackId } = await approve(admin);
    if (!writeBackId) throw new Error("a patch approval records a write-back");
    await executeWriteBackTask({ writeBackId }, ctx);
    const wb = await db.writeBack.findUniqueOrThrow({ where: { id: writeBackId } });
    expect(wb).toMatchObject({ outcome: "succeeded", artifactDigest: contentDigest(PATCH) });
    // What reached the branch is the approved patch, byte for byte.
    const { git } = await import("@/server/forges/local/git");
    const readme = await git(["show", `${wb.externalRef}:README.md`], { cwd: local.repoPath });
    expect(readme).toBe(`x\n${patchLines.join("\n")}\n`);

    expect(await leaks()).toEqual([]);
  });

  it("an exempt write-back never pushes a protected patch by itself: it waits for a person", async () => {
    await db.repository.update({ where: { id: local.repository.id }, data: { writeBackExceptions: ["push_commits"] } });
    const exempt = await createStack(scriptedSpec({ adapter: { kind: "command", command: agentCommand, env: [], outputFormat: "airlock" }, approvalMode: "exceptions_allowed" }));
    const run = await createExecRun({ repositoryId: local.repository.id, stack: exempt, sha: local.sha, actorUserId: maintainer.id, isFork: true });
    await dispatchRunTask({ runId: run.id }, ctx);
    await drain(ctx);
    const after = await db.agentDispatchRun.findUniqueOrThrow({ where: { id: run.id }, include: { approvals: true, writeBacks: true } });
    expect(after.writeBacks).toHaveLength(0);
    expect(after.approvals).toHaveLength(1);
    expect(after.approvals[0]!.presented).toMatchObject({ pushProtection: { note: expect.stringMatching(/^Push protection/) } });
  });
});
