// The stack forms' procedures against a real database: versions and digests, validation from the
// same schemas the form uses, who may change a global stack, two people editing at once, archive,
// and the preview against the run the live trigger path creates.
import { TRPCError } from "@trpc/server";
import { beforeAll, describe, expect, it } from "vitest";
import { getDb } from "@/server/db";
import { AppError } from "@/server/errors";
import { callerFor, createRepository, createUser } from "@/server/testing/factories";
import { callHttp, evaluate, failedCheck, makeRule, makeStack, recordFailure, sha, stackInput, stackSpec, uid } from "@/server/testing/config-factories";
import type { SessionUser } from "@/server/auth/roles";
import { createStack } from "./stacks-service";
import { stackSnapshot, zStackSpec } from "./spec";

const db = getDb();
let admin: SessionUser;
let maintainer: SessionUser;
let otherMaintainer: SessionUser;
let viewer: SessionUser;
let repo: Awaited<ReturnType<typeof createRepository>>;
let otherRepo: Awaited<ReturnType<typeof createRepository>>;

beforeAll(async () => {
  [admin, maintainer, otherMaintainer, viewer] = await Promise.all([
    createUser({ isAdmin: true }),
    createUser(),
    createUser(),
    createUser(),
  ]);
  repo = await createRepository({ members: [[maintainer, "maintainer"], [otherMaintainer, "maintainer"], [viewer, "viewer"]] });
  otherRepo = await createRepository();
});

async function refusal(p: Promise<unknown>): Promise<TRPCError> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err, "expected a refusal").toBeInstanceOf(TRPCError);
  return err as TRPCError;
}

const details = (err: TRPCError) => (err.cause as AppError).details as Record<string, unknown>;

describe("creating and editing a stack", () => {
  it("creates version 1 with the snapshot digest a run stores, and an audit entry", async () => {
    const input = stackInput();
    const saved = await callerFor(maintainer).stacks.create(input);
    expect(saved.version).toBe(1);
    const version = await db.agentStackVersion.findUniqueOrThrow({ where: { stackId_version: { stackId: saved.id, version: 1 } } });
    const spec = zStackSpec.parse(version.spec);
    expect(spec).toEqual(input.spec);
    expect(version.digest).toBe(stackSnapshot({ id: saved.id, name: input.name, version: 1, spec }).digest);
    expect(version.createdById).toBe(maintainer.id);
    const audit = await db.auditEntry.findMany({ where: { objectId: saved.id } });
    expect(audit.map((a) => a.action)).toEqual(["stack.create"]);
  });

  it("appends a version on every save and leaves earlier versions and runs' snapshots alone", async () => {
    const saved = await makeStack(db, maintainer);
    const v1 = await db.agentStackVersion.findUniqueOrThrow({ where: { stackId_version: { stackId: saved.id, version: 1 } } });
    const input = stackInput({ name: saved.name, spec: { model: "claude-opus-4", tools: ["Read", "Grep", "Edit"] } });
    const updated = await callerFor(maintainer).stacks.update({ ...input, stackId: saved.id, expectedVersion: 1 });
    expect(updated.version).toBe(2);
    expect(updated.diff.changes.map((c) => c.path)).toEqual(["model", "tools"]);
    expect(await db.agentStackVersion.findUniqueOrThrow({ where: { id: v1.id } })).toEqual(v1);
    const diff = await callerFor(viewer).stacks.diff({ stackId: saved.id, from: 1, to: 2 });
    expect(diff.changes).toContainEqual({ path: "tools", kind: "added", before: null, after: "Edit" });
    const detail = await callerFor(viewer).stacks.byId({ stackId: saved.id });
    expect(detail.versions.map((v) => v.version)).toEqual([2, 1]);
    expect(detail.canEdit.allowed).toBe(false);
  });

  it("refuses to save nothing", async () => {
    const saved = await makeStack(db, maintainer);
    const current = await callerFor(maintainer).stacks.byId({ stackId: saved.id });
    const err = await refusal(
      callerFor(maintainer).stacks.update({ name: current.name, description: current.description, spec: current.spec, stackId: saved.id, expectedVersion: 1 }),
    );
    expect(err.code).toBe("BAD_REQUEST");
  });
});

describe("validation", () => {
  it("answers a bad form with field errors from the same schema (HTTP, the real formatter)", async () => {
    const bad = stackInput({ name: "Not A Name", spec: { promptTemplate: "Fix {{nope.missing}} now" } });
    const res = await callHttp(maintainer, "stacks.create", bad);
    expect(res.status).toBe(400);
    expect(res.error?.data.code).toBe("BAD_REQUEST");
    expect(res.error?.data.fieldErrors?.name?.[0]).toMatch(/Lowercase letters/);
    expect(res.error?.data.fieldErrors?.["spec.promptTemplate"]?.join(" ")).toContain("{{nope.missing}}");
    expect(await db.agentStack.count({ where: { name: "Not A Name" } })).toBe(0);
  });

  it("refuses the same input in the domain with dotted field paths", async () => {
    const bad = stackInput({ spec: { promptTemplate: "{{nope}}", adapter: { kind: "command", command: [""], env: [], outputFormat: "airlock" } } });
    const err = await createStack({ db, actor: maintainer, input: bad }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AppError);
    const fieldErrors = (err as AppError).details?.fieldErrors as Record<string, string[]>;
    expect(fieldErrors["spec.promptTemplate"]?.[0]).toContain("{{nope}}");
    expect(Object.keys(fieldErrors)).toContain("spec.adapter.command.0");
  });

  it("refuses a taken name on the name field", async () => {
    const first = await makeStack(db, maintainer);
    const err = await refusal(callerFor(maintainer).stacks.create(stackInput({ name: first.name })));
    expect(err.code).toBe("CONFLICT");
    expect((details(err).fieldErrors as Record<string, string[]>).name?.[0]).toContain(first.name);
  });
});

describe("who may change a stack", () => {
  it("refuses anonymous callers", async () => {
    expect((await refusal(callerFor(null).stacks.list())).code).toBe("UNAUTHORIZED");
    expect((await refusal(callerFor(null).stacks.create(stackInput()))).code).toBe("UNAUTHORIZED");
  });

  it("refuses a viewer, who sees read-only forms", async () => {
    const onlyViewer = await createUser();
    await db.membership.create({ data: { userId: onlyViewer.id, repositoryId: repo.id, role: "viewer" } });
    const err = await refusal(callerFor(onlyViewer).stacks.create(stackInput()));
    expect(err.code).toBe("FORBIDDEN");
    const list = await callerFor(onlyViewer).stacks.list();
    expect(list.canCreate.allowed).toBe(false);
  });

  it("lets a maintainer edit a stack only their repositories use; others are the admins'", async () => {
    const mine = await makeStack(db, maintainer);
    await makeRule(db, maintainer, { stackId: mine.id, repositoryId: repo.id });
    const edit = (id: string, name: string, user: SessionUser) =>
      callerFor(user).stacks.update({ ...stackInput({ name, spec: { model: `m-${uid()}` } }), stackId: id, expectedVersion: 1 });
    expect((await edit(mine.id, mine.name, maintainer)).version).toBe(2);

    const shared = await makeStack(db, admin);
    await makeRule(db, admin, { stackId: shared.id, repositoryId: otherRepo.id });
    const foreign = await refusal(edit(shared.id, shared.name, maintainer));
    expect(foreign.code).toBe("FORBIDDEN");
    expect(foreign.message).toContain(otherRepo.fullName);

    const global = await makeStack(db, admin);
    await makeRule(db, admin, { stackId: global.id, repositoryId: null });
    expect((await refusal(edit(global.id, global.name, maintainer))).message).toMatch(/every repository/);
    expect((await edit(global.id, global.name, admin)).version).toBe(2);
  });
});

describe("two people edit the same stack", () => {
  it("refuses the second save with the first one's change, and loses neither", async () => {
    const saved = await makeStack(db, maintainer);
    // Both open version 1.
    const loaded = await callerFor(otherMaintainer).stacks.byId({ stackId: saved.id });
    expect(loaded.version).toBe(1);
    const theirs = stackInput({ name: saved.name, spec: { model: "claude-opus-4" } });
    await callerFor(maintainer).stacks.update({ ...theirs, stackId: saved.id, expectedVersion: 1 });

    const mine = { name: loaded.name, description: loaded.description, spec: { ...loaded.spec, tools: [...loaded.spec.tools, "Edit"] } };
    const err = await refusal(callerFor(otherMaintainer).stacks.update({ ...mine, stackId: saved.id, expectedVersion: 1 }));
    expect(err.code).toBe("CONFLICT");
    expect(err.message).toContain(maintainer.email);
    const d = details(err);
    expect(d).toMatchObject({ expectedVersion: 1, currentVersion: 2, savedBy: maintainer.email });
    expect((d.theirChange as { changes: unknown[] }).changes).toEqual([
      { path: "model", kind: "changed", before: "claude-sonnet-4-5", after: "claude-opus-4" },
    ]);
    expect((d.current as { spec: { model: string } }).spec.model).toBe("claude-opus-4");

    const stored = await callerFor(viewer).stacks.byId({ stackId: saved.id });
    expect(stored.version).toBe(2);
    expect(stored.spec.model).toBe("claude-opus-4");
    expect(stored.spec.tools).not.toContain("Edit");
    expect(await db.agentStackVersion.count({ where: { stackId: saved.id } })).toBe(2);

    // Reapplied on top of their version, it saves.
    const again = await callerFor(otherMaintainer).stacks.update({ ...mine, spec: { ...mine.spec, model: "claude-opus-4" }, stackId: saved.id, expectedVersion: 2 });
    expect(again.version).toBe(3);
  });
});

describe("archiving", () => {
  it("refuses while an enabled rule uses the stack; an archived stack cannot be picked", async () => {
    const saved = await makeStack(db, maintainer);
    const rule = await makeRule(db, maintainer, { stackId: saved.id, repositoryId: repo.id });
    const busy = await refusal(callerFor(maintainer).stacks.archive({ stackId: saved.id }));
    expect(busy.code).toBe("CONFLICT");
    expect(busy.message).toContain(rule.name);
    await db.triggerRule.update({ where: { id: rule.id }, data: { enabled: false } });
    const archived = await callerFor(maintainer).stacks.archive({ stackId: saved.id });
    expect(archived.archivedAt).not.toBeNull();
    const pick = await refusal(
      callerFor(maintainer).triggers.create({ ...ruleShape(saved.id), name: "uses-archived" }),
    );
    expect(pick.code).toBe("UNPROCESSABLE_CONTENT");
    expect(Object.keys(details(pick).fieldErrors as object)).toEqual(["stackId"]);
    expect((await callerFor(maintainer).stacks.restore({ stackId: saved.id })).archivedAt).toBeNull();
    const actions = (await db.auditEntry.findMany({ where: { objectId: saved.id }, orderBy: { createdAt: "asc" } })).map((a) => a.action);
    expect(actions).toEqual(["stack.create", "stack.archive", "stack.restore"]);
  });
});

function ruleShape(stackId: string) {
  return {
    name: "r",
    kind: "failed_check" as const,
    repositoryId: repo.id,
    workflow: null,
    job: null,
    step: null,
    branchGlob: null,
    pathFilters: [],
    failureSignature: null,
    stackId,
    taskKind: "diagnose" as const,
    action: "suggest" as const,
    enabled: true,
  };
}

describe("the preview is the prompt a run gets", () => {
  it("gives the prompt, bundle digest and stack digest the live trigger path gives the run", async () => {
    const stack = await makeStack(db, maintainer);
    const rule = await makeRule(db, maintainer, { stackId: stack.id, repositoryId: repo.id, workflow: "CI" });
    const deliveryId = await recordFailure(db, failedCheck({ repo: repo.fullName, headSha: sha(`preview-${uid()}`), runId: `run-${uid()}` }));
    const current = await callerFor(maintainer).stacks.byId({ stackId: stack.id });
    const sources = await callerFor(viewer).stacks.previewSources({ repositoryId: repo.id });
    expect(sources.map((s) => s.ref)).toContainEqual({ kind: "delivery", deliveryId });

    const preview = await callerFor(viewer).stacks.preview({
      repositoryId: repo.id,
      stackId: stack.id,
      name: current.name,
      spec: current.spec,
      source: { kind: "delivery", deliveryId },
      taskKind: "diagnose",
    });
    expect(preview.candidate).toMatchObject({ ruleName: rule.name, hypothetical: false });
    expect(preview.stack).toMatchObject({ version: 1, saved: true });

    // Other tests' rules (one for every repository) match too: take this rule's run.
    const evaluated = await evaluate(db, deliveryId);
    const run = await db.agentDispatchRun.findFirstOrThrow({ where: { id: { in: evaluated.created.map((c) => c.runId) }, triggerRuleId: rule.id } });
    expect(preview.prompt).toBe(run.prompt);
    expect(preview.promptHash).toBe(run.promptHash);
    expect(preview.contextDigest).toBe(run.contextDigest);
    expect(preview.stack.digest).toBe(run.stackDigest);

    // An unsaved edit previews as the next version, and the run keeps the snapshot it used.
    const edited = stackSpec({ tools: ["Read", "Grep", "Bash(npm test:*)"] });
    const next = await callerFor(viewer).stacks.preview({
      repositoryId: repo.id,
      stackId: stack.id,
      name: current.name,
      spec: edited,
      source: { kind: "delivery", deliveryId },
      taskKind: "diagnose",
    });
    expect(next.stack).toMatchObject({ version: 2, saved: false });
    expect(next.prompt).toContain("- Bash(npm test:*)");
    expect(next.promptHash).not.toBe(run.promptHash);
    await callerFor(maintainer).stacks.update({ name: current.name, description: current.description, spec: edited, stackId: stack.id, expectedVersion: 1 });
    const after = await db.agentDispatchRun.findUniqueOrThrow({ where: { id: run.id } });
    expect(after.stackVersion).toBe(1);
    expect(after.stackDigest).toBe((await db.agentStackVersion.findUniqueOrThrow({ where: { stackId_version: { stackId: stack.id, version: 1 } } })).digest);
    expect(after.stackSnapshot).toEqual(run.stackSnapshot);
  });

  it("previews a stack no rule uses through a hypothetical rule, and refuses a repository the caller cannot see", async () => {
    const deliveryId = await recordFailure(db, failedCheck({ repo: repo.fullName, headSha: sha(`hyp-${uid()}`), runId: `run-${uid()}` }));
    const input = stackInput();
    const preview = await callerFor(maintainer).stacks.preview({ repositoryId: repo.id, stackId: null, name: input.name, spec: stackSpec(), source: { kind: "delivery", deliveryId }, taskKind: "repair" });
    expect(preview.candidate).toMatchObject({ hypothetical: true, taskKind: "repair" });
    expect(preview.prompt).toContain(repo.fullName);
    const stranger = await createUser();
    const err = await refusal(
      callerFor(stranger).stacks.preview({ repositoryId: repo.id, stackId: null, name: input.name, spec: stackSpec(), source: { kind: "delivery", deliveryId }, taskKind: "repair" }),
    );
    expect(err.code).toBe("FORBIDDEN");
  });

  it("shows a claude-code stack's exact command line and generated files, secrets by name only", async () => {
    const deliveryId = await recordFailure(db, failedCheck({ repo: repo.fullName, headSha: sha(`cc-${uid()}`), runId: `run-${uid()}` }));
    const input = stackInput();
    const spec = zStackSpec.parse({ ...stackSpec(), adapter: { kind: "claude-code", maxTurns: 12 }, tools: ["Read"], subagents: [], skills: [] });
    const preview = await callerFor(maintainer).stacks.preview({ repositoryId: repo.id, stackId: null, name: input.name, spec, source: { kind: "delivery", deliveryId }, taskKind: "repair" });
    const launch = preview.stack.launch!;
    expect(launch.argv).toContain("--max-turns=12");
    expect(launch.argv).toContain("--tools=Read");
    expect(launch.argv).toContain(`--model=${spec.model}`);
    expect(launch.files.map((f) => f.name)).toEqual(["settings.json", "mcp.json"]);
    // No grant exists for the key here: the preview says it is withheld rather than pretending.
    expect(launch.withheld).toContain("secret anthropic-api-key (the model API key): not granted");
    const command = await callerFor(maintainer).stacks.preview({ repositoryId: repo.id, stackId: null, name: input.name, spec: stackSpec(), source: { kind: "delivery", deliveryId }, taskKind: "repair" });
    expect(command.stack.launch).toBeNull();
  });
});
