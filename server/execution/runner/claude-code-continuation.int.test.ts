import { existsSync, rmSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { getDb } from "@/server/db";
import { zAttemptLaunch } from "@/server/domain/runs/schemas";
import { installedClaudeBinary } from "@/server/execution/agents/claude-code/claude-code-adapter";
import { type DoubleTurn, lastUserText, type RecordedRequest } from "@/server/execution/agents/testing/messages-api-double";
import { closeClaudeCodeRun, runClaudeCodeStack, testHostAddress } from "@/server/queue/testing/claude-code-run";
import { callerFor } from "@/server/testing/factories";

// "Send" and "Attach context" reach the agent: the continuation's attempt runs the real `claude`
// with --resume of the earlier attempt's session where its file was kept, so the Messages-API
// TEST DOUBLE sees the earlier conversation; where it was not, a fresh session whose prompt
// carries a summary of the transcript and the new text. The launch record says which.

afterEach(closeClaudeCodeRun);

const firstReply = "The sign in sum.js is wrong: it subtracts.";
const newText = "Also check the README mentions sum.";

/** The double: the first prompt gets the diagnosis, anything after it "done"; side requests (no tools) a title. */
const respond = (req: RecordedRequest): DoubleTurn => {
  if (!(req.body.tools ?? []).length) return { blocks: [{ type: "text", text: "title" }] };
  return lastUserText(req).includes("fix sum.js") ? { blocks: [{ type: "text", text: firstReply }] } : { blocks: [{ type: "text", text: "done" }] };
};

const start = () => runClaudeCodeStack({ respond, files: { "sum.js": "export const sum = (a, b) => a - b;\n" }, prompt: "sum(1, 2) is -1: fix sum.js" });

const allText = (req: RecordedRequest) => JSON.stringify(req.body.messages ?? []);
const launchLine = (events: { type: string; payload: unknown }[]) =>
  events.map((e) => (e.payload as { text?: string }).text ?? "").find((t) => t.includes("Claude Code command line")) ?? "";

describe.skipIf(!testHostAddress || !existsSync(installedClaudeBinary()))("a continuation of a claude-code run", () => {
  it("Send with attached context resumes the earlier Claude session: the model sees the earlier conversation, then the new text and the context", async () => {
    const first = await start();
    expect(first.after.attempts[0]!.status, first.after.attempts[0]!.exitReason ?? "").toBe("succeeded");
    const sessionId = first.after.attempts[0]!.agentSessionId!;
    expect(sessionId).toMatch(/^[0-9a-f-]{36}$/);
    // Context attached to the run (allowed while it awaits approval or runs) goes to the next attempt.
    await getDb().agentDispatchRun.update({ where: { id: first.after.id }, data: { status: "running" } });
    const caller = callerFor(first.user);
    await caller.runs.attachContext({ runId: first.after.id, attachmentId: "b6c7d0a2-0f5e-4d8e-9a51-3c1f2b7e9d10", kind: "note", title: "From the reviewer", url: "", path: "", startLine: "", text: "The README example uses sum(2, 2)." });
    await getDb().agentDispatchRun.update({ where: { id: first.after.id }, data: { status: "succeeded" } });
    const before = first.requests.length;

    const child = await caller.runs.resume({ runId: first.after.id, instructions: newText });
    const { after, events } = await first.dispatchAlso(child.runId);
    const attempt = after.attempts[0]!;
    expect(attempt.status, attempt.exitReason ?? "").toBe("succeeded");

    const line = launchLine(events);
    expect(line).toContain(`Continuation of run #${first.after.number}: resumes Claude session ${sessionId} of its attempt 1 (--resume`);
    expect(line).toContain(`"--resume=${sessionId}"`);
    // The attempt's launch record (what the approval screen shows) says so too.
    const record = zAttemptLaunch.parse(attempt.launchRecord);
    expect(record.command).toContain(`--resume=${sessionId}`);
    expect(record.continuation).toContain(`resumes Claude session ${sessionId}`);
    const main = first.requests.slice(before).filter((r) => (r.body.tools ?? []).length > 0);
    expect(main.length).toBeGreaterThan(0);
    // The double sees the earlier conversation: the first prompt and the model's own reply,
    // then the new text alone (the attached context, then the instructions).
    const history = main[0]!.body.messages ?? [];
    expect(history.some((m) => m.role === "assistant" && JSON.stringify(m.content).includes(firstReply))).toBe(true);
    const seen = allText(main[0]!);
    expect(seen).toContain("fix sum.js");
    expect(seen).toContain(firstReply);
    const last = lastUserText(main[0]!);
    expect(last).toContain(newText);
    expect(last).toContain("The README example uses sum(2, 2).");
    expect(last).not.toContain("transcript so far");
    // The continuation's attempt has a session of its own (forked), itself resumable.
    expect(attempt.agentSessionId).toMatch(/^[0-9a-f-]{36}$/);
    expect(attempt.agentSessionId).not.toBe(sessionId);
    // The bundle carries the attached context too.
    expect(JSON.stringify(after.contextBundle)).toContain("The README example uses sum(2, 2).");
  }, 180_000);

  it("where the earlier session's file was not kept, a fresh session gets a summary of the transcript and the new text", async () => {
    const first = await start();
    expect(first.after.attempts[0]!.status).toBe("succeeded");
    rmSync(join(first.ctx.settings.dataDir, "agent-sessions", first.after.id), { recursive: true, force: true });
    const before = first.requests.length;
    const child = await callerFor(first.user).runs.resume({ runId: first.after.id, instructions: newText });
    const { after, events } = await first.dispatchAlso(child.runId);
    expect(after.attempts[0]!.status, after.attempts[0]!.exitReason ?? "").toBe("succeeded");
    const line = launchLine(events);
    expect(line).toContain(`Continuation of run #${first.after.number}: a fresh session (the session file of run #${first.after.number} was not kept)`);
    expect(line).not.toContain("--resume");
    expect(zAttemptLaunch.parse(after.attempts[0]!.launchRecord).continuation).toContain("a fresh session");
    const main = first.requests.slice(before).filter((r) => (r.body.tools ?? []).length > 0);
    // One user turn: the prompt, which carries the summary (the model's earlier reply) and the new text.
    const messages = main[0]!.body.messages ?? [];
    expect(messages.filter((m) => m.role === "assistant")).toHaveLength(0);
    const prompt = lastUserText(main[0]!);
    expect(prompt).toContain("The transcript so far");
    expect(prompt).toContain(firstReply);
    expect(prompt).toContain(newText);
  }, 180_000);
});
