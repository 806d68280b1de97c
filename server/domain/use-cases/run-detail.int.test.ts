import { describe, expect, it } from "vitest";
import superjson from "superjson";
import { appendRunEvents } from "@/server/domain/events/append";
import type { RunEventInput } from "@/server/domain/events/catalogue";
import { callerFor, createRepository, createRun, createUser } from "@/server/testing/factories";
import { testDb } from "@/server/testing/db";
import { sha256 } from "@/server/lib/digest";

// The run page's read model and transcript queries, through the real procedures.

const db = testDb();
const logs = (texts: string[]): RunEventInput[] => texts.map((text) => ({ type: "log", payload: { stream: "stdout", text } }));

async function appendTexts(runId: string, texts: string[]) {
  for (let i = 0; i < texts.length; i += 50) await appendRunEvents({ db, runId, events: logs(texts.slice(i, i + 50)) });
}

describe("runs.byId", () => {
  it("gives each viewer the controls their role and the run's state allow, with reasons", async () => {
    const viewer = await createUser();
    const maintainer = await createUser();
    const repo = await createRepository({ members: [[viewer, "viewer"], [maintainer, "maintainer"]] });
    const run = await createRun({ repositoryId: repo.id, status: "running" });
    const asViewer = await callerFor(viewer).runs.byId({ runId: run.id });
    expect(asViewer.viewerRole).toBe("viewer");
    expect(asViewer.controls.cancel).toEqual({ enabled: false, reason: "This needs the maintainer role on the repository; you are viewer", detail: null });
    const asMaintainer = await callerFor(maintainer).runs.byId({ runId: run.id });
    expect(asMaintainer.controls.cancel.enabled).toBe(true);
    expect(asMaintainer.controls.retry).toMatchObject({ enabled: false, reason: "The run is running; retry is for failed, cancelled or escalated runs" });
    expect(asMaintainer.controls.attachContext).toEqual({ enabled: true, reason: null, detail: null });
    expect(asMaintainer.stack).toMatchObject({ name: "test-stack", version: 1, spec: null });
    expect(asMaintainer.context).toMatchObject({ labels: [], logExcerpts: [] });

    await callerFor(maintainer).runs.cancel({ runId: run.id });
    const after = await callerFor(maintainer).runs.byId({ runId: run.id });
    expect(after.controls.cancel).toMatchObject({ enabled: false, reason: "The run is already cancelled; there is nothing to cancel" });
    expect(after.terminal).toBe(true);
    expect(after.controls.retry.enabled).toBe(true);
  });
});

describe("runs.events windows", () => {
  it("pages newest first, before a seq, and after a seq, without gaps", async () => {
    const user = await createUser();
    const repo = await createRepository({ members: [[user, "viewer"]] });
    const run = await createRun({ repositoryId: repo.id, status: "running" });
    await appendTexts(run.id, Array.from({ length: 120 }, (_, i) => `line ${i + 1}`));
    const caller = callerFor(user);
    const seqs = (events: { seq: number }[]) => events.map((e) => e.seq);
    expect(seqs(await caller.runs.events({ runId: run.id, limit: 50 }))).toEqual(Array.from({ length: 50 }, (_, i) => 71 + i));
    expect(seqs(await caller.runs.events({ runId: run.id, beforeSeq: 71, limit: 50 }))).toEqual(Array.from({ length: 50 }, (_, i) => 21 + i));
    expect(seqs(await caller.runs.events({ runId: run.id, afterSeq: 0, limit: 10 }))).toEqual(Array.from({ length: 10 }, (_, i) => 1 + i));
    expect(await caller.runs.events({ runId: run.id, beforeSeq: 1, limit: 10 })).toEqual([]);
    await expect(caller.runs.events({ runId: run.id, beforeSeq: 5, afterSeq: 1 })).rejects.toMatchObject({ code: "BAD_REQUEST" });
  });

  it("still finds events on the far side of a purged range", async () => {
    const user = await createUser();
    const repo = await createRepository({ members: [[user, "viewer"]] });
    const run = await createRun({ repositoryId: repo.id, status: "running" });
    await appendTexts(run.id, Array.from({ length: 60 }, (_, i) => `line ${i + 1}`));
    await db.runEvent.deleteMany({ where: { runId: run.id, seq: { gte: 11, lte: 50 } } });
    const caller = callerFor(user);
    const seqs = (events: { seq: number }[]) => events.map((e) => e.seq);
    expect(seqs(await caller.runs.events({ runId: run.id, beforeSeq: 51, limit: 5 }))).toEqual([6, 7, 8, 9, 10]);
    expect(seqs(await caller.runs.events({ runId: run.id, afterSeq: 10, limit: 3 }))).toEqual([51, 52, 53]);
  });

  it("never answers with more than 2 MB, however large the events", async () => {
    const user = await createUser();
    const repo = await createRepository({ members: [[user, "viewer"]] });
    const run = await createRun({ repositoryId: repo.id, status: "running" });
    // 80 events of ~60 KB = ~4.8 MB of transcript.
    await appendTexts(run.id, Array.from({ length: 80 }, (_, i) => `${i} ${"x".repeat(60_000)}`));
    const caller = callerFor(user);
    for (const input of [{}, { beforeSeq: 70 }, { afterSeq: 3 }]) {
      const events = await caller.runs.events({ runId: run.id, limit: 1000, ...input });
      const bytes = Buffer.byteLength(JSON.stringify(superjson.serialize(events)));
      expect(bytes).toBeLessThan(2 * 1024 * 1024);
      expect(events.length).toBeGreaterThan(10);
      // Contiguous and nearest the cursor.
      for (let i = 1; i < events.length; i++) expect(events[i]!.seq).toBe(events[i - 1]!.seq + 1);
    }
    expect((await caller.runs.events({ runId: run.id, limit: 1000 })).at(-1)?.seq).toBe(80);
    expect((await caller.runs.events({ runId: run.id, afterSeq: 3, limit: 1000 }))[0]?.seq).toBe(4);
  });
});

describe("runs.searchEvents", () => {
  it("matches string values and types case-insensitively, never JSON keys, wildcards literally", async () => {
    const user = await createUser();
    const repo = await createRepository({ members: [[user, "viewer"]] });
    const run = await createRun({ repositoryId: repo.id, status: "running" });
    await appendRunEvents({
      db,
      runId: run.id,
      events: [
        { type: "message", payload: { role: "assistant", text: "The TypeError comes from parse()" } },
        { type: "log", payload: { stream: "stdout", text: "coverage 50% of lines" } },
        { type: "tool_call", payload: { id: "t1", name: "bash", input: { command: "npm test -- --grep typeerror" }, startedAt: new Date().toISOString() } },
        { type: "log", payload: { stream: "stdout", text: "coverage 50 percent" } },
        { type: "log", payload: { stream: "stdout", text: 'quote " inside' } },
      ],
    });
    const search = (query: string) => callerFor(user).runs.searchEvents({ runId: run.id, query });
    expect(await search("typeerror")).toEqual({ seqs: [1, 3], truncated: false });
    expect((await search("50%")).seqs).toEqual([2]);
    expect((await search("text")).seqs).toEqual([]);
    expect((await search("tool_call")).seqs).toEqual([3]);
    expect((await search('"')).seqs).toEqual([5]);
  });
});

describe("runs.artifact", () => {
  it("returns one artifact of this run, cut at the byte bound with truncated set", async () => {
    const user = await createUser();
    const repo = await createRepository({ members: [[user, "viewer"]] });
    const run = await createRun({ repositoryId: repo.id });
    const other = await createRun({ repositoryId: repo.id });
    const content = "é".repeat(1_500_000); // 3 MB of UTF-8
    const artifact = await db.artifact.create({
      data: { runId: run.id, kind: "patch", name: "fix.patch", content, digest: `sha256:${sha256(content)}`, sizeBytes: Buffer.byteLength(content) },
    });
    const got = await callerFor(user).runs.artifact({ runId: run.id, artifactId: artifact.id });
    expect(got.truncated).toBe(true);
    expect(Buffer.byteLength(JSON.stringify(superjson.serialize(got)))).toBeLessThan(2 * 1024 * 1024);
    expect(Buffer.byteLength(got.content!)).toBeGreaterThan(1_800_000);
    expect(got.content!.endsWith("é")).toBe(true);
    // Content that JSON escapes heavily (newlines, quotes, control characters) still fits.
    const escapy = '\n"\u0001'.repeat(700_000);
    const heavy = await db.artifact.create({
      data: { runId: run.id, kind: "log", name: "x.log", content: escapy, digest: `sha256:${sha256(escapy)}`, sizeBytes: escapy.length },
    });
    const cut = await callerFor(user).runs.artifact({ runId: run.id, artifactId: heavy.id });
    expect(cut.truncated).toBe(true);
    expect(Buffer.byteLength(JSON.stringify(superjson.serialize(cut)))).toBeLessThan(2 * 1024 * 1024);
    expect(got).toMatchObject({ name: "fix.patch", kind: "patch", sizeBytes: 3_000_000 });
    await expect(callerFor(user).runs.artifact({ runId: other.id, artifactId: artifact.id })).rejects.toMatchObject({ code: "NOT_FOUND" });
    const stranger = await createUser();
    await expect(callerFor(stranger).runs.artifact({ runId: run.id, artifactId: artifact.id })).rejects.toMatchObject({ code: "FORBIDDEN" });
  });
});
