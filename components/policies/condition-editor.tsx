"use client";

import { Plus, X } from "lucide-react";
import type { Condition, PropertyDefinition, Scalar } from "@/server/domain/policy/schemas";
import { Button } from "@/components/ui/button";
import {
  groupLabel,
  groupOf,
  leafOf,
  makeGroup,
  makeLeaf,
  newLeaf,
  operatorLabel,
  operatorsFor,
  retarget,
  type GroupKind,
  type Operator,
} from "./condition-model";
import { ListPicker, ValuePicker, controlClass } from "./value-picker";

// A condition tree built with pickers: property, then an operator the property's type allows,
// then a value of that type. Groups nest (all / any / none); a leaf at the root can be widened
// into a group by adding a second condition.

type Props = {
  value: Condition;
  onChange: (next: Condition) => void;
  properties: PropertyDefinition[];
  disabled?: boolean;
};

export function ConditionEditor({ value, onChange, properties, disabled }: Props) {
  const facts = properties.filter((p) => !p.rulesOnly);
  const addToRoot = (child: Condition) => {
    const group = groupOf(value);
    onChange(group ? makeGroup(group.kind, [...group.children, child]) : makeGroup("all", [value, child]));
  };
  return (
    <ConditionNode
      value={value}
      onChange={onChange}
      onAdd={addToRoot}
      properties={facts}
      disabled={disabled}
      depth={0}
    />
  );
}

type NodeProps = {
  value: Condition;
  onChange: (next: Condition) => void;
  /** Removes this node from its parent; absent at the root. */
  onRemove?: () => void;
  /** At the root only: adds a sibling, turning a lone leaf into a group. */
  onAdd?: (child: Condition) => void;
  properties: PropertyDefinition[];
  disabled?: boolean;
  depth: number;
};

function ConditionNode(props: NodeProps) {
  const group = groupOf(props.value);
  return group ? <GroupNode {...props} group={group} /> : <LeafNode {...props} />;
}

function GroupNode({ group, onChange, onRemove, properties, disabled, depth }: NodeProps & { group: { kind: GroupKind; children: Condition[] } }) {
  const setChildren = (children: Condition[]) => onChange(makeGroup(group.kind, children));
  const add = (child: Condition | null) => child && setChildren([...group.children, child]);
  return (
    <div role="group" aria-label={`${groupLabel[group.kind]} group`} className="rounded-md border border-dashed border-zinc-300 p-2 dark:border-zinc-700">
      <div className="mb-2 flex items-center gap-2">
        <select
          aria-label="Group"
          className={controlClass}
          disabled={disabled}
          value={group.kind}
          onChange={(e) => onChange(makeGroup(e.target.value as GroupKind, group.children))}
        >
          {(Object.keys(groupLabel) as GroupKind[]).map((kind) => (
            <option key={kind} value={kind}>
              {groupLabel[kind]}
            </option>
          ))}
        </select>
        <span className="text-xs text-zinc-500">
          {group.kind === "none" ? "holds when no condition below holds" : group.kind === "all" ? "every condition below" : "at least one condition below"}
        </span>
        {onRemove && (
          <Button type="button" size="sm" variant="ghost" className="ml-auto" disabled={disabled} onClick={onRemove} aria-label="Remove group">
            <X className="size-3.5" />
          </Button>
        )}
      </div>
      <ul className="space-y-2 border-l-2 border-zinc-200 pl-3 dark:border-zinc-700">
        {group.children.map((child, i) => (
          <li key={i}>
            <ConditionNode
              value={child}
              properties={properties}
              disabled={disabled}
              depth={depth + 1}
              onChange={(next) => setChildren(group.children.map((c, j) => (j === i ? next : c)))}
              // A group keeps at least one condition: removing the last one removes the group.
              onRemove={
                group.children.length > 1 ? () => setChildren(group.children.filter((_, j) => j !== i)) : onRemove
              }
            />
          </li>
        ))}
      </ul>
      <div className="mt-2 flex gap-2">
        <Button type="button" size="sm" variant="ghost" disabled={disabled} onClick={() => add(newLeaf(properties))}>
          <Plus className="size-3.5" /> Condition
        </Button>
        {depth < 4 && (
          <Button
            type="button"
            size="sm"
            variant="ghost"
            disabled={disabled}
            onClick={() => {
              const leaf = newLeaf(properties);
              if (leaf) add(makeGroup("any", [leaf]));
            }}
          >
            <Plus className="size-3.5" /> Group
          </Button>
        )}
      </div>
    </div>
  );
}

function LeafNode({ value, onChange, onRemove, onAdd, properties, disabled }: NodeProps) {
  const leaf = leafOf(value);
  if (!leaf) return null;
  const property = properties.find((p) => p.name === leaf.property);
  return (
    <div role="group" aria-label={`Condition on ${leaf.property}`} className="flex flex-wrap items-center gap-2">
      <select
        aria-label="Property"
        className={controlClass}
        disabled={disabled}
        value={leaf.property}
        onChange={(e) => {
          const next = properties.find((p) => p.name === e.target.value);
          if (next) onChange(retarget(leaf, next));
        }}
      >
        {!property && <option value={leaf.property}>{leaf.property} (not a fact property)</option>}
        {properties.map((p) => (
          <option key={p.name} value={p.name}>
            {p.name}
          </option>
        ))}
      </select>
      {property && (
        <>
          <select
            aria-label="Operator"
            className={controlClass}
            disabled={disabled}
            value={leaf.op}
            onChange={(e) => onChange(makeLeaf(property, e.target.value as Operator, leaf.value))}
          >
            {operatorsFor(property).map((op) => (
              <option key={op} value={op}>
                {operatorLabel[op]}
              </option>
            ))}
          </select>
          <LeafValue property={property} op={leaf.op} value={leaf.value} disabled={disabled} onChange={(v) => onChange(makeLeaf(property, leaf.op, v))} />
        </>
      )}
      <div className="ml-auto flex gap-1">
        {onAdd && (
          <Button type="button" size="sm" variant="ghost" disabled={disabled} onClick={() => { const l = newLeaf(properties); if (l) onAdd(l); }}>
            <Plus className="size-3.5" /> Condition
          </Button>
        )}
        {onRemove && (
          <Button type="button" size="sm" variant="ghost" disabled={disabled} onClick={onRemove} aria-label={`Remove condition on ${leaf.property}`}>
            <X className="size-3.5" />
          </Button>
        )}
      </div>
    </div>
  );
}

function LeafValue(props: { property: PropertyDefinition; op: Operator; value: Scalar | Scalar[]; disabled?: boolean; onChange: (v: Scalar | Scalar[]) => void }) {
  const { property, op, value, disabled, onChange } = props;
  if (op === "isEmpty") {
    return (
      <select aria-label="Value" className={controlClass} disabled={disabled} value={String(value)} onChange={(e) => onChange(e.target.value === "true")}>
        <option value="true">is absent (empty)</option>
        <option value="false">is present</option>
      </select>
    );
  }
  if (op === "inList") {
    return <ListPicker property={property} value={Array.isArray(value) ? value : [value]} disabled={disabled} onChange={onChange} />;
  }
  const single = Array.isArray(value) ? (value[0] ?? "") : value;
  return <ValuePicker property={property} value={single} disabled={disabled} onChange={onChange} />;
}
