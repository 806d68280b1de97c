import { renderToStaticMarkup } from "react-dom/server";
import { describe, expect, it } from "vitest";
import { DiffView } from "./diff-view";
import { EventRowView } from "./event-row";
import type { EventRow } from "./model";
import { SafeMarkdown } from "./safe-markdown";
import type { TEvent } from "./store";
import { TerminalText } from "./terminal-text";

// A corpus of hostile text from agents and CI, rendered by the real components
// to static HTML: nothing may come out that a browser would execute or load.

const ESC = "\u001b";
const megabyteLine = "A".repeat(1024 * 1024);
const invalidUtf8 = Buffer.from([0x66, 0xff, 0xfe, 0xc3, 0x28, 0xed, 0xa0, 0x80, 0x6f]).toString("utf8") + "\uD800 lone \uDFFF";

const hostileText = [
  "<script>alert(1)</script>",
  '<img src=x onerror="alert(1)">',
  "<svg onload=alert(1)><iframe src='javascript:alert(1)'></iframe>",
  '<a href="javascript:alert(1)">html link</a>',
  "[md link](javascript:alert(1)) [upper](JAVASCRIPT:alert(1)) [spaced](  javascript:alert(1))",
  "[data](data:text/html,<script>alert(1)</script>) [vb](vbscript:msgbox(1))",
  "<javascript:alert(1)> and [ref][1]\n\n[1]: javascript:alert(1)",
  "![pixel](https://evil.test/pixel.png?secret=1) ![js](javascript:alert(1))",
  '<div style="background:url(javascript:alert(1))" onclick="alert(1)">x</div>',
  `${ESC}]8;;javascript:alert(1)\u0007click me${ESC}]8;;\u0007 ${ESC}]52;c;ZXZpbA==\u0007 ${ESC}]0;title\u0007`,
  `${ESC}[31mred${ESC}[0m ${ESC}[2J${ESC}[H ${ESC}P+q544e${ESC}\\ \u009b31m c1`,
  megabyteLine,
  invalidUtf8,
  "normal [safe link](https://example.test/ok) text",
];

// svg, rect and path: the copy buttons' icons (lucide), ours; their attributes are checked like any other.
const allowedTags = new Set(["div", "span", "p", "a", "button", "pre", "code", "ul", "ol", "li", "em", "strong", "del", "blockquote", "mark", "time", "hr", "br", "nav", "section", "header", "table", "tbody", "tr", "td", "h1", "h2", "h3", "svg", "rect", "path"]);

/** Every tag in the markup is one we render, with no handler, script URL or injected style. */
function assertInert(html: string, maxBytes = 200_000) {
  expect(html.length, "bounded output").toBeLessThan(maxBytes);
  expect(html).not.toMatch(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f]/);
  // Text is escaped, so every "<" followed by a name is a real element.
  for (const tag of html.matchAll(/<([a-zA-Z][a-zA-Z0-9-]*)([^>]*)>/g)) {
    const [, name, attrs] = tag;
    expect(allowedTags.has(name!.toLowerCase()), `element <${name}>`).toBe(true);
    for (const a of attrs!.matchAll(/\s([^\s=]+)(?:="([^"]*)")?/g)) {
      const [, attr, value = ""] = a;
      expect(attr!, "event handler attribute").not.toMatch(/^on/i);
      if (/^(href|src|action|formaction|xlink:href)$/i.test(attr!)) expect(value, `${attr} value`).toMatch(/^(https?:\/\/|#|\/)/i);
      if (attr === "style") expect(value).toMatch(/^(color:rgb\(\d+, \d+, \d+\);?|background-color:rgb\(\d+, \d+, \d+\);?|padding-left:\d+px;?)+$/);
    }
  }
}

let seq = 0;
const ev = (type: string, payload: unknown): TEvent => ({ seq: ++seq, type, payload, attemptId: null, at: Date.parse("2026-11-29T10:00:00Z") + seq });

function rowHtml(row: EventRow, expanded = true) {
  return renderToStaticMarkup(
    <EventRowView row={row} runId="run_1" expanded={expanded} collapsed={false} selected={false} match="none" query={undefined} onToggle={() => {}} onToggleSubagent={() => {}} />,
  );
}

describe("hostile input renders inert", () => {
  it.each(hostileText.map((t, i) => [i, t] as const))("Markdown #%i", (_i, text) => {
    const html = renderToStaticMarkup(<SafeMarkdown text={text} />);
    assertInert(html, 2_000_000);
  });

  it("keeps a safe http(s) link as a link that opens without a referrer, and never loads an image", () => {
    const html = renderToStaticMarkup(<SafeMarkdown text={"[ok](https://example.test/ok) ![p](https://evil.test/p.png)"} />);
    expect(html).toContain('href="https://example.test/ok"');
    expect(html).toContain('rel="noopener noreferrer nofollow ugc"');
    expect(html).toContain("[image: p]");
    expect(html).not.toContain("<img");
  });

  it.each(hostileText.map((t, i) => [i, t] as const))("terminal output #%i", (_i, text) => {
    const html = renderToStaticMarkup(<TerminalText text={text} startLine={41} anchorPrefix="L" />);
    assertInert(html, 20_000);
  });

  it("cuts a 1 MB line to a bounded prefix with a 'show all' control", () => {
    const html = renderToStaticMarkup(<TerminalText text={megabyteLine} />);
    expect(html.length).toBeLessThan(10_000);
    expect(html).toMatch(/show all \(1,046,576 more characters\)/);
  });

  it("keeps the visible text of an OSC 8 hyperlink and drops the link", () => {
    const html = renderToStaticMarkup(<TerminalText text={`${ESC}]8;;javascript:alert(1)\u0007click me${ESC}]8;;\u0007`} />);
    expect(html).toContain("click me");
    expect(html).not.toContain("javascript");
  });

  it("renders every event type with hostile payloads inert, expanded and collapsed", () => {
    const t = hostileText.filter((x) => x !== megabyteLine).join("\n");
    const call = ev("tool_call", { id: "c1", name: "<script>x</script>", input: { command: t, nested: { html: t } }, startedAt: "2026-11-29T10:00:00Z" });
    const result = ev("tool_result", { toolCallId: "c1", output: `${t}\n${megabyteLine}`, isError: true, durationMs: 5 });
    const rows: EventRow[] = [
      { kind: "event", key: "a", event: ev("message", { role: "assistant", text: t }), depth: 0, ancestors: [] },
      { kind: "event", key: "b", event: call, depth: 1, ancestors: ["s"], result },
      { kind: "event", key: "c", event: ev("tool_result", { toolCallId: "zz", output: t, isError: false }), depth: 0, ancestors: [] },
      { kind: "event", key: "d", event: ev("subagent_started", { id: "s", name: t, parentId: null, summary: t }), depth: 0, ancestors: [], childCount: 2 },
      { kind: "event", key: "e", event: ev("log", { stream: "stderr", text: `${t}\n${megabyteLine}` }), depth: 0, ancestors: [] },
      { kind: "event", key: "f", event: ev("artifact_produced", { artifactId: 'x" onmouseover="alert(1)', kind: "patch", name: t, digest: t, sizeBytes: 1 }), depth: 0, ancestors: [] },
      { kind: "event", key: "g", event: ev("approval_requested", { approvalId: "a", action: "push_commits", target: { branch: t }, reason: t }), depth: 0, ancestors: [] },
      { kind: "event", key: "h", event: ev("write_back_completed", { writeBackId: "w", action: "comment", outcome: "failed", externalRef: "javascript:alert(1)", error: t }), depth: 0, ancestors: [] },
      { kind: "event", key: "i", event: ev("status", { scope: "run", from: "running", to: t, reason: t }), depth: 0, ancestors: [] },
      { kind: "event", key: "j", event: ev("<img src=x onerror=alert(1)>", { anything: t }), depth: 0, ancestors: [] },
      { kind: "event", key: "k", event: ev("message", "not an object"), depth: 0, ancestors: [] },
    ];
    for (const row of rows) {
      assertInert(rowHtml(row, true));
      assertInert(rowHtml(row, false));
    }
    const artifact = rowHtml(rows[5]!);
    expect(artifact).toContain('href="/runs/run_1/artifacts/x%22%20onmouseover%3D%22alert(1)"');
  });

  it("renders a hostile patch as inert text with syntax colours", () => {
    const patch = [
      "diff --git a/x.ts b/x.ts",
      "--- a/x.ts",
      "+++ b/x.ts",
      "@@ -1,1 +1,2 @@ <script>alert(1)</script>",
      '-const a = "<img src=x onerror=alert(1)>";',
      `+const b = "${ESC}]8;;javascript:alert(1)\u0007x${ESC}]8;;\u0007";`,
      "+// <script>alert(2)</script>",
      "",
    ].join("\n");
    const html = renderToStaticMarkup(<DiffView patch={patch} />);
    assertInert(html);
    expect(html).toContain("text-purple-700"); // `const` highlighted as a keyword
    expect(html).toContain("&lt;script&gt;");
  });
});
