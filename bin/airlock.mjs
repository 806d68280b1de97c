#!/usr/bin/env node
// The Airlock CLI: the REST API (/api/v1) from a terminal. Plain Node (no build step), so
// `npx airlock …` runs from the package as it is. Configuration: --url / AIRLOCK_URL (default
// http://localhost:3000) and --token / AIRLOCK_TOKEN (an API token from Settings → API tokens).
import { readFile, writeFile } from "node:fs/promises";
import { Command, Option } from "commander";
import { parse as parseYaml, stringify as toYaml } from "yaml";

const program = new Command("airlock")
  .description("Airlock from the terminal: runs, approvals, stacks and trigger rules")
  .addOption(new Option("--url <url>", "the Airlock server").env("AIRLOCK_URL").default("http://localhost:3000"))
  .addOption(new Option("--token <token>", "an API token").env("AIRLOCK_TOKEN"))
  .option("--json", "print JSON instead of text")
  .showHelpAfterError();

class ApiError extends Error {
  constructor(status, body) {
    super(body?.error?.message ?? `HTTP ${status}`);
    this.status = status;
    this.reason = body?.error?.reason ?? null;
  }
}

function settings() {
  const { url, token, json } = program.opts();
  if (!token) throw new Error("No API token: pass --token or set AIRLOCK_TOKEN (make one under Settings → API tokens).");
  return { base: `${url.replace(/\/+$/, "")}/api/v1`, token, json: Boolean(json) };
}

async function api(method, path, body) {
  const { base, token } = settings();
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body ? { "content-type": "application/json" } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  const text = await res.text();
  const parsed = text ? JSON.parse(text) : null;
  if (!res.ok) throw new ApiError(res.status, parsed);
  return parsed;
}

const query = (params) => {
  const q = new URLSearchParams(Object.entries(params).filter(([, v]) => v !== undefined && v !== null).map(([k, v]) => [k, String(v)]));
  return q.size > 0 ? `?${q}` : "";
};

const out = (value, text) => console.log(settings().json ? JSON.stringify(value, null, 2) : text(value));
const pad = (s, n) => String(s ?? "").padEnd(n);

// ---------------------------------------------------------------- runs

const runs = program.command("runs").description("dispatch runs");

runs
  .command("list")
  .option("--repository <id>", "only this repository")
  .option("--status <status>", "only runs in this status")
  .option("--limit <n>", "at most this many", "25")
  .action(async (o) => {
    const page = await api("GET", `/runs${query({ repositoryId: o.repository, status: o.status, limit: o.limit })}`);
    out(page, (p) => p.items.map((r) => `#${pad(r.number, 6)} ${pad(r.status, 18)} ${pad(r.repository?.fullName ?? "", 28)} ${r.title}  ${r.id}`).join("\n") || "No runs.");
  });

runs
  .command("show <runId>")
  .action(async (runId) => {
    const run = await api("GET", `/runs/${encodeURIComponent(runId)}`);
    out(run, (r) =>
      [`Run #${r.number}: ${r.title}`, `status      ${r.status}`, `repository  ${r.repository?.fullName ?? ""}`, `task        ${r.taskKind}`, `head        ${r.headSha ?? ""}`, `id          ${r.id}`].join("\n"),
    );
  });

/** One event as a terminal line. */
function eventLine(e) {
  const p = e.payload ?? {};
  const head = `${String(e.seq).padStart(5)} ${e.createdAt?.slice(11, 19) ?? ""} ${pad(e.type, 14)}`;
  const body =
    e.type === "message" ? `${p.role}: ${p.text}` :
    e.type === "tool_call" ? `${p.name} ${JSON.stringify(p.input)}` :
    e.type === "tool_result" ? `${p.isError ? "error: " : ""}${p.output}` :
    e.type === "log" ? `[${p.stream}] ${p.text}` :
    e.type === "status" ? `${p.scope} ${p.from ?? ""} → ${p.to ?? ""}${p.reason ? ` (${p.reason})` : ""}` :
    JSON.stringify(p);
  return `${head} ${String(body).replace(/\n/g, "\n" + " ".repeat(29))}`;
}

/** Streams a run's events to the terminal until the server ends the stream (the run finished). */
async function watch(runId) {
  const { base, token, json } = settings();
  let lastSeq = 0;
  for (let attempt = 0; ; attempt++) {
    let res;
    try {
      res = await fetch(`${base}/runs/${encodeURIComponent(runId)}/events/stream`, {
        headers: { authorization: `Bearer ${token}`, accept: "text/event-stream", ...(lastSeq > 0 ? { "last-event-id": String(lastSeq) } : {}) },
      });
    } catch (err) {
      if (attempt >= 5) throw err;
      await new Promise((r) => setTimeout(r, 1000 * (attempt + 1)));
      continue;
    }
    if (!res.ok) throw new ApiError(res.status, await res.json().catch(() => null));
    const decoder = new TextDecoder();
    let buffer = "";
    let dropped = false;
    try {
      for await (const chunk of res.body) {
        buffer += decoder.decode(chunk, { stream: true });
        let end;
        while ((end = buffer.search(/\r?\n\r?\n/)) >= 0) {
          const frame = buffer.slice(0, end);
          buffer = buffer.slice(end).replace(/^\r?\n\r?\n/, "");
          const data = frame.split(/\r?\n/).filter((l) => l.startsWith("data:")).map((l) => l.slice(5).replace(/^ /, "")).join("\n");
          const id = /^id: ?(\d+)$/m.exec(frame)?.[1];
          if (!data || !id) continue; // keepalives and comments
          if (Number(id) <= lastSeq) continue;
          lastSeq = Number(id);
          const event = JSON.parse(data);
          console.log(json ? JSON.stringify(event) : eventLine(event));
        }
      }
    } catch {
      dropped = true;
    }
    if (!dropped) return lastSeq;
    attempt = 0; // a drop mid-stream: resume after the last event seen
  }
}

runs.command("watch <runId>").description("stream the transcript until the run ends").action(async (runId) => {
  await watch(runId);
  const run = await api("GET", `/runs/${encodeURIComponent(runId)}`);
  if (!settings().json) console.log(`Run #${run.number} ${run.status}.`);
});

runs.command("cancel <runId>").option("--reason <text>").action(async (runId, o) => {
  const r = await api("POST", `/runs/${encodeURIComponent(runId)}/cancel`, { reason: o.reason });
  out(r, () => "Cancelled.");
});

runs.command("retry <runId>").option("--reason <text>").action(async (runId, o) => {
  const r = await api("POST", `/runs/${encodeURIComponent(runId)}/retry`, { reason: o.reason });
  out(r, (x) => `Queued attempt ${x.attemptNumber}.`);
});

// ---------------------------------------------------------------- approvals

const approvals = program.command("approvals").description("write-backs waiting for a person");

approvals.command("list").option("--status <status>", "pending, approved, rejected, expired, executed, failed", "pending").option("--repository <id>").action(async (o) => {
  const page = await api("GET", `/approvals${query({ status: o.status, repositoryId: o.repository })}`);
  const items = page.items ?? page;
  out(page, () => items.map((a) => `${pad(a.status, 9)} ${pad(a.action, 18)} run #${pad(a.run?.number, 6)} ${a.artifactDigest ?? ""}  ${a.id}`).join("\n") || "No approvals.");
});

approvals.command("show <approvalId>").action(async (id) => {
  const a = await api("GET", `/approvals/${encodeURIComponent(id)}`);
  out(a, (x) => [`${x.action} on run #${x.run?.number}: ${x.status}`, `artifact digest  ${x.artifactDigest ?? "(none)"}`, `target           ${JSON.stringify(x.target)}`, `id               ${x.id}`].join("\n"));
});

approvals
  .command("approve <approvalId>")
  .requiredOption("--digest <sha256>", "the artifact digest you reviewed (approvals show prints it)")
  .option("--head-sha <sha>", "the head you reviewed")
  .action(async (id, o) => {
    const r = await api("POST", `/approvals/${encodeURIComponent(id)}/approve`, { artifactDigest: o.digest, headSha: o.headSha ?? null });
    out(r, () => "Approved.");
  });

approvals.command("reject <approvalId>").requiredOption("--reason <text>").action(async (id, o) => {
  const r = await api("POST", `/approvals/${encodeURIComponent(id)}/reject`, { reason: o.reason });
  out(r, () => "Rejected.");
});

// ---------------------------------------------------------------- stacks and triggers as files

function printPlan(plan) {
  for (const e of plan.entries) {
    const mark = e.action === "create" ? "+" : e.action === "update" ? "~" : "=";
    console.log(`${mark} ${e.name} (${e.action})`);
    if (e.action === "update") for (const c of e.changes) console.log(`    ${c.path}:\n      - ${c.before ?? "(none)"}\n      + ${c.after ?? "(none)"}`);
  }
  const changed = plan.entries.filter((e) => e.action !== "unchanged").length;
  console.log(changed === 0 ? "Nothing to change." : `${changed} to ${plan.dryRun ? "change" : "changed"}.`);
}

function fileCommands(name, key) {
  const cmd = program.command(name).description(`${name} as YAML files`);
  cmd.command("export").option("-o, --out <file>", "write to this file (default: standard output)").action(async (o) => {
    const doc = await api("GET", `/${name}/export`);
    const yaml = toYaml(doc, { lineWidth: 0 });
    if (o.out) await writeFile(o.out, yaml);
    else process.stdout.write(yaml);
  });
  cmd
    .command("apply <file>")
    .option("--dry-run", "show the diff and change nothing")
    .action(async (file, o) => {
      const document = parseYaml(await readFile(file, "utf8"));
      if (!document || !Array.isArray(document[key])) throw new Error(`${file} needs a top-level \`${key}:\` list.`);
      const plan = await api("POST", `/${name}/apply`, { document, dryRun: true });
      if (settings().json && o.dryRun) return console.log(JSON.stringify(plan, null, 2));
      if (!settings().json) printPlan(plan);
      if (o.dryRun || plan.entries.every((e) => e.action === "unchanged")) return;
      const applied = await api("POST", `/${name}/apply`, { document, dryRun: false });
      if (settings().json) console.log(JSON.stringify(applied, null, 2));
      else console.log("Applied.");
    });
}
fileCommands("stacks", "stacks");
fileCommands("triggers", "triggers");

try {
  await program.parseAsync();
} catch (err) {
  console.error(`airlock: ${err.message}${err.reason ? ` (${err.reason})` : ""}`);
  process.exitCode = err instanceof ApiError && err.status === 401 ? 3 : 1;
}
