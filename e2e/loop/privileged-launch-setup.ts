// Sets up the privileged-launch loop spec's run on its loop server's database (DATABASE_URL): a
// scripted stack whose MCP server is privileged and whose cost cap its scenario passes, granted
// a secret and a config map for that server, and a queued diagnose run of it on the demo
// repository, started by the demo's trigger rule; its dispatch job goes to the running worker.
// Run as: node --import tsx e2e/loop/privileged-launch-setup.ts <bare repository>. Prints JSON.
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { getDb } from "@/server/db";
import { enqueueDispatch } from "@/server/domain/runs/attempts";
import { createExecRun, createStack, scriptedSpec } from "@/server/queue/testing/fixtures";

const [bare] = process.argv.slice(2);
if (!bare) throw new Error("usage: privileged-launch-setup.ts <bare repository>");
const db = getDb();
const repository = await db.repository.findFirstOrThrow({ where: { fullName: "demo/calculator" } });
const rule = await db.triggerRule.findFirstOrThrow({ where: { name: "calculator-npm-test" } });
const sha = execFileSync("git", ["--git-dir", bare, "rev-parse", "refs/heads/main"], { encoding: "utf8" }).trim();
const name = `e2e-privileged-${randomBytes(3).toString("hex")}`;
const stack = await createStack(
  scriptedSpec({
    tools: ["Read", "Bash(npm test:*)"],
    mcpServers: [{ name: "prod-db", transport: "stdio", target: "prod-db-mcp --read-only", secrets: ["e2e-db-password"], configMaps: ["e2e-db-host"], privileged: true, required: true }],
    skills: ["minimal-patch"],
    subagents: [{ name: "reviewer", role: "Reviews the patch for scope", tools: ["Read"] }],
    // The scenario's first usage report ($0.05 on Sonnet 4.5) passes this cap.
    limits: { wallClockMinutes: 5, maxCostUsd: 0.01, maxRetries: 2 },
  }),
  name,
);
await db.secretGrant.create({ data: { secretName: "e2e-db-password", stackId: stack.id, trustedPoolsOnly: true } });
await db.configGrant.create({ data: { configMapName: "e2e-db-host", stackId: stack.id } });
const run = await createExecRun({ repositoryId: repository.id, stack, sha, actorUserId: null, taskKind: "diagnose", prompt: "Diagnose the failing sum test in demo/calculator." });
await db.agentDispatchRun.update({ where: { id: run.id }, data: { triggerRuleId: rule.id, actor: `rule:${rule.name}` } });
await enqueueDispatch(db, run.id);
console.log(JSON.stringify({ runId: run.id, stackName: name }));
process.exit(0);
