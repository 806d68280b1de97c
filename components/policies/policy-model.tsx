import type { PolicyDefinition } from "@/server/domain/policy/schemas";
import { Badge } from "@/components/ui/badge";
import { Table } from "@/components/ui/table";

// The model the rules are written against: the subject, its typed properties and the
// fail-closed defaults. Shown read-only; it changes with Airlock, not in the rule editor.

function typeOf(p: PolicyDefinition["properties"][number]): string {
  if (p.type === "enum") return p.values.join(" | ");
  if (p.type === "integer") return `integer ${p.min ?? "−∞"}…${p.max ?? "∞"}`;
  return p.type;
}

export function PolicyModel({ definition }: { definition: PolicyDefinition }) {
  return (
    <section aria-label="Model" className="space-y-3">
      <h2 className="text-xs font-semibold tracking-wide text-zinc-500 uppercase">
        Model · subject <span className="font-mono normal-case">{definition.subject}</span>
      </h2>
      <Table columns={["Property", "Type", "Set by", "Meaning"]} density="compact">
        {definition.properties.map((p) => (
          <tr key={p.name}>
            <td className="font-mono text-xs">
              {p.name}
              {p.cardinality === "1" && !p.rulesOnly && <span className="ml-1 text-zinc-400">(required)</span>}
            </td>
            <td className="font-mono text-xs">{typeOf(p)}</td>
            <td>{p.rulesOnly ? <Badge tone="progress">rules only</Badge> : <Badge tone="muted">facts</Badge>}</td>
            <td className="text-zinc-600 dark:text-zinc-400">{p.description ?? ""}</td>
          </tr>
        ))}
      </Table>
      <ul className="space-y-1 text-sm">
        {definition.defaults.map((d) => (
          <li key={d.property}>
            When no rule matches, <span className="font-mono text-xs">{d.property}</span> = <strong>{String(d.value)}</strong>
            <span className="text-zinc-500"> — {d.explanation}</span>
          </li>
        ))}
      </ul>
    </section>
  );
}
