import { describe, expect, it } from "vitest";
import { Mailbox } from "./mailbox";
import { parseLastEventId, sseComment, sseFrame } from "./sse";
import { SseParser } from "./sse-parser";

const req = (url: string, headers: Record<string, string> = {}) => new Request(`http://x${url}`, { headers });

describe("SSE framing", () => {
  it("writes id, event and data lines and ends the frame with a blank line", () => {
    expect(sseFrame({ id: 7, event: "message", data: '{"a":1}' })).toBe('id: 7\nevent: message\ndata: {"a":1}\n\n');
  });

  it("splits multi-line data so a newline never ends a frame early", () => {
    const frame = sseFrame({ event: "x", data: "one\ntwo\r\nthree" });
    expect(frame).toBe("event: x\ndata: one\ndata: two\ndata: three\n\n");
    expect(new SseParser().push(frame)).toEqual([{ id: null, event: "x", data: "one\ntwo\nthree" }]);
  });

  it("keeps an event name to one safe token", () => {
    expect(sseFrame({ event: "bad\nevent: end", data: "" })).toBe("event: bad_event__end\ndata: \n\n");
  });

  it("round-trips through the parser across arbitrary chunk boundaries, counting comments", () => {
    const wire = sseComment("connected") + sseFrame({ id: 1, event: "a", data: "x" }) + sseComment("keepalive") + sseFrame({ id: 2, event: "b", data: "y" });
    for (let cut = 1; cut < wire.length; cut++) {
      const p = new SseParser();
      const events = [...p.push(wire.slice(0, cut)), ...p.push(wire.slice(cut))];
      expect(events).toEqual([
        { id: "1", event: "a", data: "x" },
        { id: "2", event: "b", data: "y" },
      ]);
      expect(p.comments).toBe(2);
    }
  });
});

describe("Last-Event-ID", () => {
  it("prefers the header (EventSource's reconnect) over the query (the first connection)", () => {
    expect(parseLastEventId(req("/e?lastEventId=5", { "last-event-id": "9" }))).toEqual({ ok: true, seq: 9 });
    expect(parseLastEventId(req("/e?lastEventId=5"))).toEqual({ ok: true, seq: 5 });
    expect(parseLastEventId(req("/e"))).toEqual({ ok: true, seq: 0 });
  });

  it("refuses anything but a sequence number", () => {
    for (const bad of ["-1", "1.5", "abc", "1e3", "99999999999"]) {
      expect(parseLastEventId(req("/e", { "last-event-id": bad })).ok).toBe(false);
    }
  });
});

describe("Mailbox", () => {
  const item = (n: number) => ({ n, bytes: new Uint8Array(n) });

  it("closes and frees its items at the bound instead of growing", () => {
    const reasons: string[] = [];
    const box = new Mailbox<ReturnType<typeof item>>({ maxItems: 3, maxBytes: 1_000 }, (r) => reasons.push(r));
    expect(box.put([item(1), item(1)])).toBe(true);
    expect(box.put([item(1), item(1)])).toBe(false);
    expect(box.closed).toBe(true);
    expect(box.size).toBe(0);
    expect(reasons).toEqual(["overflow"]);
    expect(box.put([item(1)])).toBe(false);
  });

  it("bounds bytes as well as items, and wakes a waiting reader", async () => {
    const box = new Mailbox<ReturnType<typeof item>>({ maxItems: 100, maxBytes: 10 });
    const waiting = box.wait();
    box.put([item(4)]);
    await waiting;
    expect(box.take().map((i) => i.n)).toEqual([4]);
    expect(box.put([item(11)])).toBe(false);
  });
});
