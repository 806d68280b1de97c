// `npm test`'s audit: `npm audit --omit=dev --audit-level=high`, read as JSON so that "the
// registry knows a high or critical advisory in a production dependency" (a failure) is told
// apart from "the registry could not be asked" (said as such, and counted as skipped: never a
// pass). npm_config_audit=false (.ci/run's installs) does not turn `npm audit` itself off.
import { spawn } from "node:child_process";

const FAILING = new Set(["high", "critical"]);

/**
 * @param {{ cwd: string, env?: NodeJS.ProcessEnv, registry?: string }} options `registry`: another
 *   registry than npm's configured one (the tests' double).
 * @returns {Promise<{ status: "ok" | "failed" | "unavailable", summary: string, findings: string[] }>}
 *   `findings`: one line per vulnerable production package at high or critical.
 */
export async function auditProductionDependencies({ cwd, env = process.env, registry }) {
  const args = ["audit", "--omit=dev", "--audit-level=high", "--json", ...(registry ? [`--registry=${registry}`] : [])];
  const r = await run("npm", args, { cwd, env });
  let report;
  try {
    report = JSON.parse(r.stdout);
  } catch {
    const output = `${r.stdout ?? ""}${r.stderr ?? ""}`.trim().split("\n").slice(-5).join(" | ");
    return { status: "failed", summary: `npm audit gave no report (exit ${r.status ?? r.signal}): ${output || "no output"}`, findings: [] };
  }
  if (!report.auditReportVersion) {
    // npm's answer when the advisory endpoint fails: { message, error: { summary, detail } }. Its
    // own errors carry a code (ENOLOCK: no lockfile) and are failures.
    if (report.error && !report.error.code) {
      return { status: "unavailable", summary: `the registry's advisory endpoint could not be asked: ${report.message ?? "no reason given"}`, findings: [] };
    }
    const reason = report.error ? `${report.error.code}: ${report.error.summary}` : r.stdout.slice(0, 200);
    return { status: "failed", summary: `npm audit failed: ${reason}`, findings: [] };
  }
  const counts = report.metadata?.vulnerabilities ?? {};
  const findings = Object.values(report.vulnerabilities ?? {})
    .filter((v) => FAILING.has(v.severity))
    .map((v) => {
      const advisories = v.via.filter((a) => typeof a === "object").map((a) => `${a.title} (${a.url})`);
      const through = v.via.filter((a) => typeof a === "string");
      return `${v.name} (${v.severity}, vulnerable ${v.range}): ${[...advisories, ...through.map((n) => `through ${n}`)].join("; ")}`;
    });
  const tally = ["critical", "high", "moderate", "low"].map((s) => `${counts[s] ?? 0} ${s}`).join(", ");
  const failing = findings.length > 0 || (counts.high ?? 0) + (counts.critical ?? 0) > 0;
  return { status: failing ? "failed" : "ok", summary: `production dependencies: ${tally}`, findings };
}

/** Like spawnSync, without blocking the event loop (the tests serve the registry double in-process). */
function run(cmd, args, opts) {
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { ...opts, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (d) => (stdout += d));
    child.stderr.setEncoding("utf8").on("data", (d) => (stderr += d));
    child.on("error", (err) => resolve({ status: null, signal: null, stdout, stderr: `${stderr}${err.message}` }));
    child.on("close", (status, signal) => resolve({ status, signal, stdout, stderr }));
  });
}
