import { Card } from "@/components/ui/card";
import type { RanWith } from "@/server/domain/runs/schemas";
import { Field, list } from "./fields";

// "What the agent ran with": the attempt's stored launch record, shown on a write-back's
// approval screen beside the privileged_capability view of what an attempt will launch with:
// the exact command line, the generated files (they name variables as ${NAME}, never values),
// the environment by name and where each variable came from, model, tools, MCP servers, and the
// secrets and config maps by name only.

const quoted = (argv: readonly string[]) => argv.map((a) => (/^[\w@%+=:,./-]+$/.test(a) ? a : JSON.stringify(a))).join(" ");

export function RanWithView({ ranWith }: { ranWith: RanWith }) {
  const l = ranWith.launch;
  return (
    <Card as="section" padding="sm" aria-label="What the agent ran with">
      <h2 className="font-medium">What the agent ran with (attempt {ranWith.attemptNumber})</h2>
      <p className="mt-1 text-sm">Recorded when the agent started: its work above came from this process. Secrets and config maps by name only.</p>
      {l.continuation && <p className="mt-1 text-sm" data-testid="ran-with-continuation">{l.continuation}</p>}
      <dl className="mt-3 grid gap-3 sm:grid-cols-2">
        <Field label="Model and adapter">{`${l.model} · ${l.adapter}`}</Field>
        <Field label="Tools">{list(l.tools)}</Field>
        <Field label="MCP servers">{list(l.mcpServers.map((m) => `${m.name}: ${m.transport} ${m.target}`))}</Field>
        <Field label="Secrets (names only)">{list(l.secrets)}</Field>
        <Field label="ConfigMaps">{list(l.configMaps)}</Field>
        <Field label="Environment (names, and where each comes from)">{list(l.env.map((e) => `${e.name} (${e.from})`))}</Field>
        {l.withheld.length > 0 && <Field label="Asked for and not given">{list(l.withheld)}</Field>}
      </dl>
      <h3 className="mt-3 text-xs font-medium text-zinc-600 dark:text-zinc-400">Command line (the prompt went on stdin)</h3>
      <pre className="mt-1 max-h-60 overflow-auto rounded bg-zinc-50 p-2 text-xs whitespace-pre-wrap break-all dark:bg-zinc-950" data-testid="ran-with-command">
        {l.command.length > 0 ? quoted(l.command) : "No process: the adapter reported no command line."}
      </pre>
      {l.files.map((f) => (
        <details key={f.name} className="mt-2 text-sm">
          <summary className="cursor-pointer">Generated file {f.name}</summary>
          <pre className="mt-1 max-h-60 overflow-auto rounded bg-zinc-50 p-2 text-xs whitespace-pre-wrap dark:bg-zinc-950">{f.content}</pre>
        </details>
      ))}
    </Card>
  );
}
