import { Check, X } from "lucide-react";
import type { FactSource, PolicyDecision, ProofLeaf, ProofNode, Scalar } from "@/server/domain/policy/schemas";
import { Badge } from "@/components/ui/badge";
import { Card, cardVariants } from "@/components/ui/card";
import { cn } from "@/components/ui/cn";
import { LoadingRegion, SkeletonLines } from "@/components/ui/skeleton";

// One rendering of a decision and its proof, used by the policy page's Try it panel, the run
// view and the approval screen alike. The outcome first, then the rule that decided with its
// explanation, then the condition tree: every leaf shows the fact it saw and who asserted it
// (or that it was absent, read under the closed world). A default decision lists every rule
// that did not match, each with the tree that failed, so "nothing matched" is shown, not claimed.
// No hooks and no data access: it renders in server and client components.

export const sourceLabel: Record<FactSource | "closed_world", string> = {
  webhook: "asserted by a webhook",
  person: "asserted by a person",
  api: "asserted by the API",
  system: "asserted by the system",
  closed_world: "absent: closed world",
};

const testLabel: Record<ProofLeaf["test"], string> = {
  is: "is",
  isNot: "is not",
  inList: "is one of",
  below: "is below",
  above: "is above",
  isEmpty: "is empty",
};

const groupTitle = { all: "all of", any: "any of", none: "none of" } as const;

function show(value: Scalar | Scalar[]): string {
  return Array.isArray(value) ? `(${value.map(String).join(", ")})` : String(value);
}

function Holds({ holds }: { holds: boolean }) {
  return holds ? (
    <Check aria-label="holds" className="size-3.5 shrink-0 text-emerald-600" />
  ) : (
    <X aria-label="fails" className="size-3.5 shrink-0 text-red-600" />
  );
}

function LeafLine({ leaf }: { leaf: ProofLeaf }) {
  const expected = leaf.test === "isEmpty" ? (leaf.expected === false ? "false (present)" : "") : show(leaf.expected);
  return (
    <div className="flex flex-wrap items-center gap-x-1.5 gap-y-0.5 text-sm" data-proof-leaf={leaf.property}>
      <Holds holds={leaf.holds} />
      <span className="font-mono text-xs font-medium">{leaf.property}</span>
      {leaf.seen !== null && <span className="rounded bg-zinc-100 px-1 font-mono text-xs dark:bg-zinc-800">{String(leaf.seen)}</span>}
      <span className="text-zinc-500">{testLabel[leaf.test]}</span>
      {expected && <span className="font-mono text-xs">{expected}</span>}
      <Badge tone={leaf.source === "closed_world" ? "muted" : "info"} className="ml-1" data-provenance={leaf.source}>
        {sourceLabel[leaf.source]}
      </Badge>
    </div>
  );
}

function Node({ node }: { node: ProofNode }) {
  if (node.kind === "leaf") return <LeafLine leaf={node} />;
  return (
    <div>
      <div className="flex items-center gap-1.5 text-sm">
        <Holds holds={node.holds} />
        <span className="text-xs font-semibold tracking-wide text-zinc-500 uppercase">{groupTitle[node.kind]}</span>
      </div>
      <ul className="mt-1 ml-1.5 space-y-1 border-l border-zinc-300 pl-3 dark:border-zinc-700">
        {node.children.map((child, i) => (
          <li key={i}>
            <Node node={child} />
          </li>
        ))}
      </ul>
    </div>
  );
}

/** Just the condition tree of a proof, for places that show the outcome themselves. */
export function ProofNodeTree({ tree }: { tree: ProofNode }) {
  return (
    <div className="rounded-md bg-zinc-50 p-2 dark:bg-zinc-900/60">
      <Node node={tree} />
    </div>
  );
}

/** Where a proof is still loading. */
export function ProofSkeleton() {
  return (
    <LoadingRegion label="Loading the proof">
      <Card as="div" padding="sm">
        <SkeletonLines lines={3} />
      </Card>
    </LoadingRegion>
  );
}

export function ProofTree({ decision, className }: { decision: PolicyDecision; className?: string }) {
  const { proof, policy } = decision;
  return (
    <figure
      data-testid="proof-tree"
      aria-label={`Proof of ${decision.property} = ${String(decision.value)}`}
      className={cn(cardVariants({ padding: "sm" }), "space-y-2 dark:bg-zinc-950", className)}
    >
      <figcaption className="space-y-1">
        <div className="flex flex-wrap items-center gap-2">
          <span className="min-w-0 font-mono text-sm break-all">
            {decision.property} = <strong>{String(decision.value)}</strong>
          </span>
          {proof.via === "rule" ? (
            // A rule name can be long and the run page's pane is narrow: the badge wraps inside it.
            <Badge tone="success" className="max-w-full whitespace-normal break-all">
              via {proof.rule} · priority {proof.priority}
            </Badge>
          ) : (
            <Badge tone="warning">fail-closed default</Badge>
          )}
        </div>
        <p className="text-sm text-zinc-600 dark:text-zinc-400">{proof.explanation}</p>
      </figcaption>

      {proof.via === "rule" ? (
        <ProofNodeTree tree={proof.tree} />
      ) : (
        <div className="space-y-2">
          <p className="text-xs text-zinc-500">
            {proof.unmatched.length === 0 ? "The policy has no rule for this property." : "No rule matched:"}
          </p>
          {proof.unmatched.map((rule) => (
            <details key={rule.rule} className="rounded-md border border-zinc-200 p-2 dark:border-zinc-800">
              <summary className="cursor-pointer text-sm">
                <span className="font-mono text-xs">{rule.rule}</span>
                <span className="ml-2 text-xs text-zinc-500">priority {rule.priority} · did not match</span>
              </summary>
              <div className="mt-2">
                <ProofNodeTree tree={rule.tree} />
              </div>
            </details>
          ))}
        </div>
      )}

      <FactsSeen decision={decision} />
      <footer className="text-xs text-zinc-500">
        policy <span className="font-mono">{policy.kind}</span>
        {policy.version !== null ? ` v${policy.version}` : " (unsaved edits)"}
        {policy.digest && (
          <span className="ml-1 font-mono" title={policy.digest}>
            · {policy.digest.slice(0, 15)}…
          </span>
        )}
      </footer>
    </figure>
  );
}

function FactsSeen({ decision }: { decision: PolicyDecision }) {
  const facts = Object.entries(decision.facts);
  return (
    <details className="text-sm">
      <summary className="cursor-pointer text-xs text-zinc-500">Facts given ({facts.length})</summary>
      <ul className="mt-1 space-y-0.5">
        {facts.map(([name, fact]) => (
          <li key={name} className="flex flex-wrap items-center gap-1.5">
            <span className="font-mono text-xs">{name}</span> = <span className="font-mono text-xs">{String(fact.value)}</span>
            <Badge tone="info">{sourceLabel[fact.source]}</Badge>
          </li>
        ))}
        {facts.length === 0 && <li className="text-xs text-zinc-500">None: every property was absent.</li>}
      </ul>
    </details>
  );
}
