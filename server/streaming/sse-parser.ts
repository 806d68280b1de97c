// A minimal incremental SSE parser (the reading side of sse.ts), for Node
// clients: tests and the benchmark read streams with it. Browsers use EventSource.

export type SseEvent = { id: string | null; event: string; data: string };

export class SseParser {
  private buffer = "";
  private lastId: string | null = null;
  /** Comment lines seen (heartbeats). */
  comments = 0;

  /** Feeds text; returns the complete events it finished. */
  push(text: string): SseEvent[] {
    this.buffer += text;
    const out: SseEvent[] = [];
    for (;;) {
      const m = /\r\n\r\n|\n\n|\r\r/.exec(this.buffer);
      if (!m) break;
      const block = this.buffer.slice(0, m.index);
      this.buffer = this.buffer.slice(m.index + m[0].length);
      const event = this.parseBlock(block);
      if (event) out.push(event);
    }
    return out;
  }

  private parseBlock(block: string): SseEvent | null {
    let event = "message";
    const data: string[] = [];
    let hasData = false;
    for (const line of block.split(/\r\n|\r|\n/)) {
      if (line.startsWith(":")) {
        this.comments++;
        continue;
      }
      const colon = line.indexOf(":");
      const field = colon === -1 ? line : line.slice(0, colon);
      let value = colon === -1 ? "" : line.slice(colon + 1);
      if (value.startsWith(" ")) value = value.slice(1);
      if (field === "data") {
        data.push(value);
        hasData = true;
      } else if (field === "event") event = value;
      else if (field === "id") this.lastId = value;
    }
    return hasData ? { id: this.lastId, event, data: data.join("\n") } : null;
  }
}
