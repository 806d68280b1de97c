import { describe, expect, it } from "vitest";
import { EventChannel } from "./event-channel";

describe("EventChannel", () => {
  it("delivers buffered and later events in order, then ends when closed", async () => {
    const channel = new EventChannel<number>();
    channel.push(1);
    const read = (async () => {
      const seen: number[] = [];
      for await (const n of channel) seen.push(n);
      return seen;
    })();
    channel.push(2);
    await new Promise((r) => setTimeout(r, 5));
    channel.push(3);
    channel.close();
    channel.push(4); // after close: dropped
    expect(await read).toEqual([1, 2, 3]);
  });

  it("calls onEvent even when nobody iterates, and survives a throwing callback", () => {
    const seen: number[] = [];
    const channel = new EventChannel<number>((n) => {
      seen.push(n);
      throw new Error("callback failed");
    });
    channel.push(1);
    channel.push(2);
    expect(seen).toEqual([1, 2]);
  });

  it("can be iterated only once", () => {
    const channel = new EventChannel<number>();
    channel[Symbol.asyncIterator]();
    expect(() => channel[Symbol.asyncIterator]()).toThrow("iterated once");
  });
});
