import { Card } from "@/components/ui/card";
import { CopyButton } from "@/components/ui/copy-button";
import type { PresentedLaunch } from "@/server/domain/approvals/schemas";
import { Field, list } from "./fields";

// A privileged_capability request: exactly what attempt N launches with once approved, as the
// request froze it (zPresented's `launch`), and why each privileged part counts as privileged.
// Approving launches this record only while what would launch still has its digest.

const capabilityKind = { secret: "Privileged secret", mcp_server: "Privileged MCP server", network: "Open network" } as const;

const account = (a: PresentedLaunch["record"]["runtimeServiceAccount"]) => `${a.namespace}/${a.name}${a.privileged ? " (privileged)" : ""}`;

export function PrivilegedLaunchView({ launch }: { launch: PresentedLaunch }) {
  const r = launch.record;
  return (
    <Card as="section" padding="sm" aria-label="What will launch">
      <h2 className="font-medium">What attempt {launch.attemptNumber} will launch with</h2>
      <p className="mt-1 text-sm">It waits for a person: approving launches exactly this; any change (stack, bundle, grants, pool) makes the approval stale and it cannot launch.</p>
      <ul aria-label="Privileged capabilities" className="mt-2 list-disc pl-5 text-sm">
        {r.privileged.map((c) => (
          <li key={`${c.kind}:${c.name}`}>
            <strong>{capabilityKind[c.kind]}</strong> {c.name}: {c.why}
          </li>
        ))}
      </ul>
      <dl className="mt-3 grid gap-3 sm:grid-cols-2">
        <Field label="Launch digest">
          <span className="font-mono text-xs break-all" data-testid="launch-digest">{launch.digest}</span>
          <CopyButton value={launch.digest} what="launch digest" className="ml-0.5 align-middle" />
        </Field>
        <Field label="Model and adapter">{`${r.stack.model} · ${r.stack.adapter}`}</Field>
        <Field label="Runner pool">{`${r.pool.name} (${r.pool.trustTier}, ${r.pool.kind})`}</Field>
        <Field label="Runtime ServiceAccount">{account(r.runtimeServiceAccount)}</Field>
        <Field label="Runner ServiceAccount">{account(r.runnerServiceAccount)}</Field>
        <Field label="Secrets (names only)">{list(r.secrets.map((s) => `${s.name}${s.privileged ? " (privileged)" : ""}`))}</Field>
        <Field label="ConfigMaps">{list(r.configMaps)}</Field>
        <Field label="Network">{`${r.network.mode}${r.network.mode === "open" ? " (any host but this machine)" : `; hosts: ${list(r.network.hosts)}`}`}</Field>
        <Field label="Tools">{list(r.stack.tools)}</Field>
        <Field label="MCP servers">{list(r.stack.mcpServers.map((m) => `${m.name}: ${m.transport} ${m.target}${m.privileged ? " (privileged)" : ""}${m.required === false ? " (optional: left out if its health check fails)" : ""}; secrets ${list(m.secrets)}; config maps ${list(m.configMaps)}`))}</Field>
        <Field label="Skills">{list(r.stack.skills)}</Field>
        <Field label="Subagents">{list(r.stack.subagents.map((s) => `${s.name} (${s.role}; tools ${list(s.tools)})`))}</Field>
        <Field label="Context labels">{list(r.contextLabels)}</Field>
      </dl>
    </Card>
  );
}
