import { renderToStaticMarkup } from "react-dom/server";
import { describe, expect, it } from "vitest";
import { SafeMarkdown } from "./safe-markdown";

// GitHub-flavoured Markdown from agents renders as structure (tables, strikethrough, task lists),
// and the GFM extensions open no new way to inject markup or scripts.

const render = (text: string) => renderToStaticMarkup(<SafeMarkdown text={text} />);

describe("SafeMarkdown with GitHub-flavoured Markdown", () => {
  it("renders a table with its header, cells and alignment", () => {
    const html = render(["| test | status | ms |", "| :--- | :---: | ---: |", "| `auth.spec.ts` | **failed** | 1203 |", "| api.spec.ts | passed | 88 |"].join("\n"));
    expect(html).toContain("<table");
    expect(html.match(/<th[ >]/g)).toHaveLength(3);
    expect(html.match(/<td[ >]/g)).toHaveLength(6);
    expect(html).toMatch(/<th[^>]*>test<\/th>/);
    expect(html).toMatch(/<td[^>]*><code[^>]*>auth\.spec\.ts<\/code><\/td>/);
    expect(html).toMatch(/<td[^>]*><strong>failed<\/strong><\/td>/);
    expect(html).toMatch(/<td[^>]*text-align:right[^>]*>1203<\/td>/);
    expect(html).not.toContain("| :---");
  });

  it("renders strikethrough, task lists and autolinks", () => {
    const html = render("~~flaky~~ fixed\n\n- [x] diagnose\n- [ ] repair\n\nsee https://ci.example/run/1");
    expect(html).toContain("<del>flaky</del>");
    expect(html.match(/type="checkbox"/g)).toHaveLength(2);
    expect(html).toMatch(/<input[^>]*checked=""[^>]*disabled=""|<input[^>]*disabled=""[^>]*checked=""/);
    expect(html).toMatch(/<a href="https:\/\/ci\.example\/run\/1"[^>]*rel="noopener noreferrer nofollow ugc"/);
  });

  it("keeps hostile content inside table cells and autolinks inert", () => {
    const html = render(
      ["| a | b |", "| - | - |", "| <script>alert(1)</script> | [x](javascript:alert(1)) |", "| <img src=x onerror=alert(1)> | www.evil.test/<svg/onload=alert(1)> |"].join("\n"),
    );
    expect(html).toContain("<table");
    // Markup comes out as escaped text at most: no element, handler attribute or script URL.
    expect(html).not.toMatch(/<script|<img|<svg|\son\w+=|href="javascript:/i);
    expect(html).toContain("&lt;svg/onload=alert(1)&gt;");
  });
});
