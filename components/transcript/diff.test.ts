import { describe, expect, it } from "vitest";
import { languageOf, parsePatch } from "./diff";

const patch = `diff --git a/src/app.ts b/src/app.ts
index 1111111..2222222 100644
--- a/src/app.ts
+++ b/src/app.ts
@@ -10,3 +10,4 @@ export function main() {
   const a = 1;
-  const b = "<script>alert(1)</script>";
+  const b = 2;
+  const c = 3;
   return a;
diff --git a/docs/new.md b/docs/new.md
new file mode 100644
--- /dev/null
+++ b/docs/new.md
@@ -0,0 +1,2 @@
+# Title
+text
`;

describe("parsePatch", () => {
  it("reads files, hunks and old/new line numbers", () => {
    const [app, doc] = parsePatch(patch);
    expect(app).toMatchObject({ path: "src/app.ts", status: "modified", additions: 2, deletions: 1, language: "typescript" });
    expect(app!.hunks[0]!.header).toBe("@@ -10,3 +10,4 @@ export function main() {");
    expect(app!.hunks[0]!.lines).toEqual([
      { kind: "context", oldLine: 10, newLine: 10, text: "  const a = 1;" },
      { kind: "del", oldLine: 11, newLine: null, text: '  const b = "<script>alert(1)</script>";' },
      { kind: "add", oldLine: null, newLine: 11, text: "  const b = 2;" },
      { kind: "add", oldLine: null, newLine: 12, text: "  const c = 3;" },
      { kind: "context", oldLine: 12, newLine: 13, text: "  return a;" },
    ]);
    expect(doc).toMatchObject({ path: "docs/new.md", status: "added", additions: 2, language: "markdown" });
  });

  it("returns nothing for text that is not a diff", () => {
    expect(parsePatch("just some text\n<b>hi</b>")).toEqual([]);
  });

  it("picks languages by extension and leaves unknown ones plain", () => {
    expect(languageOf("a/b/c.py")).toBe("python");
    expect(languageOf("Makefile")).toBe("makefile");
    expect(languageOf("weird.zzz")).toBeNull();
  });
});
