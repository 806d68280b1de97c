import { describe, expect, it } from "vitest";
import { TranscriptRedactor } from "./transcript";
import { SECRET_SHAPES } from "./testing/corpus";

const pem = SECRET_SHAPES.find((s) => s.name === "pem private key")!.value;
const log = (text: string, stream: "stdout" | "stderr" = "stdout") => ({ type: "log" as const, payload: { stream, text } });
const textOf = (e: { payload: unknown }) => (e.payload as { text: string }).text;

describe("TranscriptRedactor", () => {
  it("masks a private key printed one line per event, up to its END line, and only on its own stream", () => {
    const r = new TranscriptRedactor([]);
    const lines = ["$ cat id_rsa", ...pem.split("\n"), "$ echo done"];
    const out = lines.map((l) => textOf(r.redact(log(l))));
    expect(out[0]).toBe("$ cat id_rsa");
    expect(out.slice(1, -1).every((t) => t.startsWith("[REDACTED:private_key]"))).toBe(true);
    expect(out.at(-1)).toBe("$ echo done");
    expect(r.masked?.entries).toEqual([expect.objectContaining({ kind: "private_key", count: pem.split("\n").length })]);
    // A body-looking line on another stream, or after the key ended, is left alone.
    const other = new TranscriptRedactor([]);
    other.redact(log(pem.split("\n")[0]!));
    expect(textOf(other.redact(log("c2hvdWxkIHN0YXkgdmlzaWJsZQ==", "stderr")))).toBe("c2hvdWxkIHN0YXkgdmlzaWJsZQ==");
  });
  it("redacts every event, grants or not, and keeps the tally", () => {
    const r = new TranscriptRedactor([{ name: "TOKEN", value: "granted-value-1234" }]);
    const gh = SECRET_SHAPES.find((s) => s.name === "github classic")!.value;
    const e = r.redact({ type: "tool_call", payload: { id: "t", name: "Bash", startedAt: "2026-01-05T09:00:00Z", input: { [gh]: "granted-value-1234" } } });
    expect(JSON.stringify(e)).not.toContain(gh);
    expect(JSON.stringify(e)).not.toContain("granted-value-1234");
    expect(r.masked?.entries.map((x) => x.kind).sort()).toEqual(["github_token", "known_secret"]);
  });
});
