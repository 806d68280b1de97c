// Redaction benchmark: `npm run bench -- redaction`.
// Every agent event of every run is now redacted before it is stored (issue 14). This measures
// what that costs per event on a realistic transcript mix (terminal lines with colour, assistant
// markdown, tool calls with inputs and outputs; about 1 in 50 carries a token), side by side with
// its reference, the text boundary alone (what every event paid before redaction for all), in
// one run, and checks the redacted rate stays far above what one attempt's transcript writer
// commits (batches of up to 500 events, one transaction each: a few thousand events a second).
import { TranscriptRedactor } from "@/server/domain/context/redaction/transcript";
import type { AgentEvent } from "@/server/domain/events/catalogue";
import { eventPayloadLimits } from "@/server/domain/events/catalogue";
import { boundJson } from "@/server/lib/text-boundary";

const EVENTS = 20_000;
const FLOOR_PER_SECOND = 5_000;
const token = ["gh", "p_", "R4nd0mT0k3nV4lu3xYz9R4nd0mT0k3nV4lu3x"].join("").slice(0, 40);

function transcript(): AgentEvent[] {
  const out: AgentEvent[] = [];
  for (let i = 0; i < EVENTS; i++) {
    const leak = i % 50 === 0 ? ` GH_TOKEN=${token}` : "";
    switch (i % 4) {
      case 0:
        out.push({ type: "log", payload: { stream: "stdout", text: `\u001b[32m✓\u001b[0m src/math/sum.test.ts > sum > adds ${i} (3 ms)${leak}` } });
        break;
      case 1:
        out.push({ type: "message", payload: { role: "assistant", text: `The failing test expects **${i}**; \`sum()\` returns ${i - 1}. See [the log](https://ci.example.test/runs/${i}).${leak}` } });
        break;
      case 2:
        out.push({ type: "tool_call", payload: { id: `t${i}`, name: "Bash", input: { command: `npm test -- --grep "case ${i}"${leak}`, timeout: 120000 }, startedAt: "2026-01-05T09:00:00Z" } });
        break;
      default:
        out.push({ type: "tool_result", payload: { toolCallId: `t${i - 1}`, output: `FAIL src/math/sum.test.ts\n  expected ${i} received ${i - 1}\n    at sum.test.ts:12:5${leak}`, isError: true } });
    }
  }
  return out;
}

function rate(label: string, events: AgentEvent[], fn: (e: AgentEvent) => unknown, warmUp: (e: AgentEvent) => unknown = fn): number {
  for (const e of events.slice(0, 1000)) warmUp(e);
  const started = performance.now();
  for (const e of events) fn(e);
  const ms = performance.now() - started;
  const perSecond = Math.round((events.length / ms) * 1000);
  console.log(`${label.padEnd(44)} ${perSecond.toLocaleString("en").padStart(9)} events/s  (${(ms / events.length * 1000).toFixed(1)} µs/event)`);
  return perSecond;
}

const events = transcript();
const reference = rate("reference: text boundary only", events, (e) => boundJson(e.payload, eventPayloadLimits));
const secrets = [{ name: "NPM_TOKEN", value: "npm-granted-7f3c9a1e5b2d" }];
const redactor = new TranscriptRedactor(secrets);
const spare = new TranscriptRedactor(secrets);
const bounded = (e: AgentEvent) => ({ ...e, payload: boundJson(e.payload, eventPayloadLimits).value }) as AgentEvent;
const redacted = rate("text boundary + redaction (every event)", events, (e) => redactor.redact(bounded(e)), (e) => spare.redact(bounded(e)));
const masked = redactor.masked?.entries.reduce((n, x) => n + x.count, 0) ?? 0;
console.log(`masked ${masked} tokens in ${EVENTS} events (expected ${EVENTS / 50}); redaction costs ${(reference / redacted).toFixed(1)}x the boundary alone`);
if (masked !== EVENTS / 50 || redacted < FLOOR_PER_SECOND) {
  console.error(`FAIL: expected ${EVENTS / 50} masked and at least ${FLOOR_PER_SECOND} events/s`);
  process.exit(1);
}
