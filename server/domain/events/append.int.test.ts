import pg from "pg";
import { describe, expect, it } from "vitest";
import { getDb } from "@/server/db";
import { createRepository, createRun } from "@/server/testing/factories";
import { appendRunEvents, RUN_EVENTS_CHANNEL } from "./append";

const log = (text: string) => ({ type: "log" as const, payload: { stream: "stdout" as const, text } });

describe("appendRunEvents", () => {
  it("keeps seq gap-free and strictly increasing under concurrent writers", async () => {
    const repo = await createRepository();
    const run = await createRun({ repositoryId: repo.id, status: "running" });
    await Promise.all(
      Array.from({ length: 20 }, (_, w) =>
        appendRunEvents({ db: getDb(), runId: run.id, events: Array.from({ length: 5 }, (_, i) => log(`w${w} e${i}`)) }),
      ),
    );
    const seqs = (await getDb().runEvent.findMany({ where: { runId: run.id }, orderBy: { seq: "asc" } })).map((e) => e.seq);
    expect(seqs).toEqual(Array.from({ length: 100 }, (_, i) => i + 1));
  });

  it("refuses an event that is not in the catalogue and appends nothing", async () => {
    const repo = await createRepository();
    const run = await createRun({ repositoryId: repo.id });
    await expect(
      appendRunEvents({ db: getDb(), runId: run.id, events: [{ type: "nope", payload: {} } as never] }),
    ).rejects.toThrow();
    expect(await getDb().runEvent.count({ where: { runId: run.id } })).toBe(0);
  });

  it("notifies listeners after commit with the run id and last seq", async () => {
    const repo = await createRepository();
    const run = await createRun({ repositoryId: repo.id });
    const listener = new pg.Client({ connectionString: process.env.DATABASE_URL });
    await listener.connect();
    await listener.query(`LISTEN ${RUN_EVENTS_CHANNEL}`);
    const got = new Promise<string>((resolve) => listener.on("notification", (n) => resolve(n.payload ?? "")));
    await appendRunEvents({ db: getDb(), runId: run.id, events: [log("a"), log("b")] });
    expect(JSON.parse(await got)).toEqual({ runId: run.id, seq: 2 });
    await listener.end();
  });
});
