import type { OpenApiDocument } from "./openapi";

// The served reference of /api/v1: the OpenAPI document rendered as one plain page (no scripts,
// nothing fetched from elsewhere), every operation with its parameters and body schema.

const escape = (s: string) => s.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!);
const code = (s: string) => escape(s).replace(/`([^`]+)`/g, "<code>$1</code>");

type Operation = { summary: string; tags: string[]; parameters?: { name: string; in: string; required: boolean; description?: string; schema: unknown }[]; requestBody?: { content: Record<string, { schema: unknown }> } };

export function referencePage(doc: OpenApiDocument): string {
  const sections = doc.tags.map(({ name }) => {
    const ops = Object.entries(doc.paths).flatMap(([path, methods]) =>
      Object.entries(methods as Record<string, Operation>)
        .filter(([, op]) => op.tags.includes(name))
        .map(([method, op]) => {
          const params = (op.parameters ?? [])
            .map((p) => `<tr><td><code>${escape(p.name)}</code></td><td>${p.in}</td><td>${p.required ? "required" : ""}</td><td><code>${escape(JSON.stringify(p.schema))}</code>${p.description ? ` ${code(p.description)}` : ""}</td></tr>`)
            .join("");
          const body = op.requestBody ? `<details><summary>JSON body</summary><pre>${escape(JSON.stringify(op.requestBody.content["application/json"]?.schema, null, 2))}</pre></details>` : "";
          return `<section><h3><span class="m">${method.toUpperCase()}</span> <code>/api/v1${escape(path)}</code></h3><p>${code(op.summary)}</p>${params ? `<table><tr><th>name</th><th>in</th><th></th><th>schema</th></tr>${params}</table>` : ""}${body}</section>`;
        }),
    );
    return `<h2 id="${name}">${name}</h2>${ops.join("")}`;
  });
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${escape(doc.info.title)}</title><meta name="viewport" content="width=device-width">
<style>body{font:14px/1.5 system-ui,sans-serif;max-width:960px;margin:2rem auto;padding:0 1rem;color:#111}code,pre{font-family:ui-monospace,monospace;font-size:12px}pre{background:#f4f4f5;padding:.5rem;overflow:auto}table{border-collapse:collapse;margin:.5rem 0}td,th{border:1px solid #ddd;padding:2px 6px;text-align:left;vertical-align:top}.m{font-size:12px;background:#111;color:#fff;padding:1px 6px;border-radius:4px}section{border-top:1px solid #eee;padding:.5rem 0}@media (prefers-color-scheme:dark){body{background:#0a0a0a;color:#eee}pre{background:#18181b}td,th{border-color:#333}section{border-color:#222}}</style></head>
<body><h1>${escape(doc.info.title)}</h1><p>${code(doc.info.description)}</p><p>Machine-readable: <a href="/api/v1/openapi.json">/api/v1/openapi.json</a> (OpenAPI ${doc.openapi}).</p>
<nav>${doc.tags.map((t) => `<a href="#${t.name}">${t.name}</a>`).join(" · ")}</nav>${sections.join("")}</body></html>`;
}
