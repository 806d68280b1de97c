"use client";

import { useFieldArray, useFormContext, useWatch } from "react-hook-form";
import { CheckboxField, NumberField, SelectField, TextAreaField, TextField } from "@/components/forms/fields";
import { StringListField } from "@/components/forms/list-fields";
import { Button } from "@/components/ui/button";
import { Card } from "@/components/ui/card";
import { APPROVAL_MODE_LABELS, MCP_TRANSPORTS, MODEL_PROVIDERS, type StackFormValues } from "@/server/domain/stacks/schemas";

// The stack form's sections. Field paths follow zStackInput exactly ("spec.adapter.command"...),
// so client and server errors land on the same fields.

export function Section({ title, description, children }: { title: string; description?: string; children: React.ReactNode }) {
  return (
    <Card as="section" aria-label={title} className="space-y-3">
      <div>
        <h2 className="text-sm font-semibold">{title}</h2>
        {description && <p className="text-xs text-zinc-500">{description}</p>}
      </div>
      {children}
    </Card>
  );
}

export function IdentitySection() {
  return (
    <Section title="Stack">
      <div className="grid gap-3 sm:grid-cols-2">
        <TextField name="name" label="Name" hint="Unique; runs cite it with the version, e.g. ci-diagnoser v3" mono />
        <SelectField
          name="spec.approvalMode"
          label="Approval mode"
          options={(["always", "exceptions_allowed"] as const).map((m) => ({ value: m, label: APPROVAL_MODE_LABELS[m] }))}
        />
      </div>
      <TextAreaField name="description" label="Description" rows={2} />
      <div className="grid gap-3 sm:grid-cols-2">
        <SelectField name="spec.modelProvider" label="Model provider" options={MODEL_PROVIDERS.map((p) => ({ value: p, label: p }))} />
        <TextField name="spec.model" label="Model" placeholder="claude-sonnet-4-5" mono />
      </div>
    </Section>
  );
}

type Adapter = StackFormValues["spec"]["adapter"];

export function AdapterSection() {
  const { setValue } = useFormContext<StackFormValues>();
  const kind = useWatch<StackFormValues, "spec.adapter.kind">({ name: "spec.adapter.kind" });
  const switchTo = (next: string) => {
    const adapter: Adapter =
      next === "scripted"
        ? { kind: "scripted", scenario: "" }
        : next === "claude-code"
          ? { kind: "claude-code", apiKeySecret: "anthropic-api-key", maxTurns: 50 }
          : { kind: "command", command: [""], env: [], outputFormat: "auto" };
    setValue("spec.adapter", adapter, { shouldDirty: true, shouldValidate: false });
  };
  return (
    <Section title="Adapter" description="How a run starts the agent: Claude Code built from this stack, a command in the attempt's workspace, or a recorded scenario (demo and tests only).">
      <SelectField
        name="spec.adapter.kind"
        label="Adapter"
        onValueChange={switchTo}
        options={[
          { value: "claude-code", label: "claude-code: the Claude Code CLI, built from this stack" },
          { value: "command", label: "command: run a program" },
          { value: "scripted", label: "scripted: replay a recording (demo and tests only)" },
        ]}
      />
      {kind === "scripted" ? (
        <TextField name="spec.adapter.scenario" label="Scenario" hint="A recording under server/execution/agents/scenarios, e.g. sum-off-by-one" mono />
      ) : kind === "claude-code" ? (
        <div className="grid gap-4 sm:grid-cols-3">
          <TextField name="spec.adapter.apiKeySecret" label="API key secret" hint="Granted like any secret. On local pools it stays with Airlock's model gateway, outside the sandbox: the CLI holds a placeholder and the gateway adds the key." mono />
          <TextField name="spec.adapter.baseUrlConfigMap" label="Base URL config map (optional)" hint="A gateway's URL: where Airlock's model gateway sends the CLI's model calls. The agent cannot reach it itself unless the pool allows its host." mono />
          <NumberField name="spec.adapter.maxTurns" label="Max turns" hint="--max-turns; the cost cap (Limits) is enforced by Airlock's meter and --max-budget-usd." />
        </div>
      ) : (
        <div className="grid gap-4 sm:grid-cols-2">
          <StringListField
            name="spec.adapter.command"
            label="Command line"
            hint="One argument per item, never a shell string: no quoting surprises."
            itemLabel="Argument"
            addLabel="Add argument"
            placeholder="claude"
            mono
          />
          <div className="space-y-3">
            <StringListField
              name="spec.adapter.env"
              label="Environment names"
              hint="Names only: values come from Secret grants at admission."
              itemLabel="Environment name"
              addLabel="Add name"
              placeholder="ANTHROPIC_API_KEY"
              mono
            />
            <SelectField
              name="spec.adapter.outputFormat"
              label="Output format"
              options={[
                { value: "auto", label: "Detect per line (Airlock events or Claude Code stream-json)" },
                { value: "airlock", label: "Airlock event lines" },
                { value: "claude-stream-json", label: "Claude Code stream-json" },
              ]}
            />
          </div>
        </div>
      )}
    </Section>
  );
}

export function CapabilitiesSection() {
  return (
    <Section title="Tool profile and skills">
      <div className="grid gap-4 sm:grid-cols-2">
        <StringListField name="spec.tools" label="Allowed tools" itemLabel="Tool" addLabel="Add tool" placeholder="Bash(npm test:*)" mono />
        <StringListField
          name="spec.skills"
          label="Skills"
          hint="Each is the repository's .claude/skills/<name>/SKILL.md at the run's commit; the claude-code adapter gives the agent exactly these (a missing one stops the attempt)."
          itemLabel="Skill"
          addLabel="Add skill"
          placeholder="ci-log-reading"
          mono
        />
      </div>
    </Section>
  );
}

export function McpServersSection() {
  const { control } = useFormContext<StackFormValues>();
  const { fields, append, remove } = useFieldArray({ control, name: "spec.mcpServers" });
  const transports = useWatch<StackFormValues, "spec.mcpServers">({ name: "spec.mcpServers" });
  return (
    <Section title="MCP servers" description="Each server names the Secrets and ConfigMaps it needs; admission grants them by name.">
      {fields.map((f, i) => {
        const stdio = transports?.[i]?.transport === "stdio";
        return (
          <fieldset key={f.id} className="space-y-3 rounded-md border border-zinc-200 p-3 dark:border-zinc-800" aria-label={`MCP server ${i + 1}`}>
            <div className="grid gap-3 sm:grid-cols-[1fr_8rem_2fr]">
              <TextField name={`spec.mcpServers.${i}.name`} label="Name" mono />
              <SelectField name={`spec.mcpServers.${i}.transport`} label="Transport" options={MCP_TRANSPORTS.map((t) => ({ value: t, label: t }))} />
              <TextField name={`spec.mcpServers.${i}.target`} label={stdio ? "Command" : "URL"} placeholder={stdio ? "npx -y @acme/mcp-server" : "https://mcp.example.com/mcp"} mono />
            </div>
            <div className="grid gap-3 sm:grid-cols-2">
              <StringListField
                name={`spec.mcpServers.${i}.secrets`}
                label="Secrets it needs"
                hint="The CLI holds these in its environment (a stdio server runs beside the agent, in its sandbox): the agent's own commands can read them too. Grant only what you would give the agent."
                itemLabel="Secret"
                addLabel="Add secret"
                mono
              />
              <StringListField name={`spec.mcpServers.${i}.configMaps`} label="ConfigMaps it needs" itemLabel="ConfigMap" addLabel="Add ConfigMap" mono />
            </div>
            <div className="flex items-center justify-between">
              <div className="flex flex-wrap gap-4">
                <CheckboxField name={`spec.mcpServers.${i}.privileged`} label="Privileged" hint="Using it always waits for an approval." />
                <CheckboxField
                  name={`spec.mcpServers.${i}.required`}
                  label="Required"
                  hint="Claude Code stacks on local pools: checked before each launch (initialize, then tools/list). A required server that fails refuses the launch; an optional one is reported and left out of the agent's MCP config. Kubernetes pools are not checked yet."
                />
              </div>
              <Button type="button" size="sm" variant="ghost" onClick={() => remove(i)}>
                Remove MCP server {i + 1}
              </Button>
            </div>
          </fieldset>
        );
      })}
      <Button type="button" size="sm" onClick={() => append({ name: "", transport: "http", target: "", secrets: [], configMaps: [], privileged: false, required: true })}>
        Add MCP server
      </Button>
    </Section>
  );
}

export function SubagentsSection() {
  const { control } = useFormContext<StackFormValues>();
  const { fields, append, remove } = useFieldArray({ control, name: "spec.subagents" });
  return (
    <Section title="Subagents" description="Each subagent has a role and its own tools.">
      {fields.map((f, i) => (
        <fieldset key={f.id} className="space-y-3 rounded-md border border-zinc-200 p-3 dark:border-zinc-800" aria-label={`Subagent ${i + 1}`}>
          <div className="grid gap-3 sm:grid-cols-[12rem_1fr]">
            <TextField name={`spec.subagents.${i}.name`} label="Name" mono />
            <TextField name={`spec.subagents.${i}.role`} label="Role" />
          </div>
          <div className="flex items-end justify-between gap-3">
            <StringListField name={`spec.subagents.${i}.tools`} label="Its tools" itemLabel="Tool" addLabel="Add tool" mono className="flex-1" />
            <Button type="button" size="sm" variant="ghost" onClick={() => remove(i)}>
              Remove subagent {i + 1}
            </Button>
          </div>
        </fieldset>
      ))}
      <Button type="button" size="sm" onClick={() => append({ name: "", role: "", tools: [] })}>
        Add subagent
      </Button>
    </Section>
  );
}

export function LimitsSection() {
  return (
    <Section title="Limits">
      <div className="grid gap-3 sm:grid-cols-3">
        <NumberField name="spec.limits.wallClockMinutes" label="Wall clock (minutes)" />
        <NumberField name="spec.limits.maxCostUsd" label="Cost cap (USD)" step="0.01" hint="Per attempt. Airlock meters every agent that reports token usage (Claude Code, command stacks emitting cost events) against its price table and stops the session at the cap; Claude Code also gets --max-budget-usd. A model without a price cannot be metered: the run says its cost is unknown. A budget stop is never retried. The usage is the agent's own report (Claude Code's stream, a command agent's cost events): the cap stops a runaway agent, not a hostile one that under-reports. 0 = no cap." />
        <NumberField name="spec.limits.maxRetries" label="Retries" />
      </div>
    </Section>
  );
}
