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

  it("after a failed write, reports it once and drops what follows", async () => {
    const errors: unknown[] = [];
    const writes: number[][] = [];
    const b = new EventBatcher<number>({
      flushMs: 1,
      maxBatch: 2,
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
});
