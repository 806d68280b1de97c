import { describe, expect, it } from "vitest";
import { EventBatcher } from "./event-batcher";

describe("EventBatcher", () => {
  it("collects events for the batch window and writes them as one batch, in order", async () => {
    const writes: number[][] = [];
    const b = new EventBatcher<number>({ flushMs: 20, maxBatch: 100, write: async (e) => void writes.push(e), onError: () => {} });
    for (let i = 0; i < 5; i++) b.push(i);
    expect(writes).toEqual([]);
    await new Promise((r) => setTimeout(r, 40));
    await b.flush();
    expect(writes).toEqual([[0, 1, 2, 3, 4]]);
  });

  it("writes a full batch at once and serialises slow writes", async () => {
    const writes: number[][] = [];
    let active = 0;
    let maxActive = 0;
    const b = new EventBatcher<number>({
      flushMs: 1_000,
      maxBatch: 3,
      write: async (e) => {
        maxActive = Math.max(maxActive, ++active);
        await new Promise((r) => setTimeout(r, 10));
        writes.push(e);
        active--;
      },
      onError: () => {},
    });
    for (let i = 0; i < 7; i++) b.push(i);
    await b.flush();
    expect(writes).toEqual([[0, 1, 2], [3, 4, 5], [6]]);
    expect(maxActive).toBe(1);
  });

  it("after a fatal failure (fenced), reports it once and drops what follows", async () => {
    const errors: unknown[] = [];
    const writes: number[][] = [];
    const b = new EventBatcher<number>({
      flushMs: 1,
      maxBatch: 2,
      isFatal: (err) => (err as Error).message === "fenced",
      write: async (e) => {
        if (e[0] === 2) throw new Error("fenced");
        writes.push(e);
      },
      onError: (err) => errors.push(err),
    });
    for (let i = 0; i < 6; i++) b.push(i);
    await b.flush();
    b.push(9);
    await b.flush();
    expect(writes).toEqual([[0, 1]]);
    expect(errors).toHaveLength(1);
    expect(b.failure).toBeInstanceOf(Error);
  });

  it("retries a failed batch, and keeps writing every later batch", async () => {
    const writes: number[][] = [];
    let failures = 2;
    const b = new EventBatcher<number>({
      flushMs: 1,
      maxBatch: 2,
      retryDelaysMs: [1, 1, 1],
      write: async (e) => {
        if (e[0] === 2 && failures-- > 0) throw new Error("connection reset");
        writes.push(e);
      },
      onError: () => {
        throw new Error("not expected: the retry succeeds");
      },
    });
    for (let i = 0; i < 6; i++) b.push(i);
    await b.flush();
    expect(writes).toEqual([[0, 1], [2, 3], [4, 5]]);
    expect(b.lost).toBe(0);
  });

  it("isolates an event the database refuses: a placeholder stands in, its neighbours and later events are kept", async () => {
    const writes: string[] = [];
    const reported: { lost: number; fatal: boolean }[] = [];
    const b = new EventBatcher<string>({
      flushMs: 1,
      maxBatch: 3,
      retryDelaysMs: [1],
      placeholder: (e) => `lost:${e}`,
      write: async (e) => {
        if (e.includes("poison")) throw new Error("22P05");
        writes.push(...e);
      },
      onError: (_err, failure) => reported.push(failure),
    });
    for (const e of ["a", "poison", "c", "d", "e"]) b.push(e);
    await b.flush();
    b.push("after");
    await b.flush();
    expect(writes).toEqual(["a", "lost:poison", "c", "d", "e", "after"]);
    expect(reported).toEqual([{ fatal: false, lost: 1 }]);
    expect(b.lost).toBe(1);
    expect(b.failure).toBeUndefined();
  });

  it("does not try every event one by one when the database itself is down", async () => {
    let writes = 0;
    const reported: { lost: number }[] = [];
    const b = new EventBatcher<number>({
      flushMs: 1,
      maxBatch: 100,
      retryDelaysMs: [1],
      placeholder: (e) => -e,
      write: async () => {
        writes++;
        throw new Error("connection refused");
      },
      onError: (_err, failure) => reported.push(failure),
    });
    for (let i = 0; i < 100; i++) b.push(i);
    await b.flush();
    expect(reported).toEqual([{ fatal: false, lost: 100 }]);
    // Two tries of the batch, then three events (each with its placeholder), then it stops trying.
    expect(writes).toBe(2 + 3 * 2);
  });
});
