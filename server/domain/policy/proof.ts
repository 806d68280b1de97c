import { z } from "zod";
import { describeSource, zFactSource } from "./facts";
import { zScalar, type Scalar } from "./model";

// A proof says why a decision came out the way it did. Leaves name the fact each condition saw
// and who asserted it; an absent fact is read under the closed world and says so, which is what
// makes `isNot` and `isEmpty` provable from silence.

export const zLeafTest = z.enum(["is", "isNot", "inList", "below", "above", "isEmpty"]);

export const zProofLeaf = z.strictObject({
  kind: z.literal("leaf"),
  holds: z.boolean(),
  property: z.string(),
  test: zLeafTest,
  expected: z.union([zScalar, z.array(zScalar)]),
  /** The fact's value, or null when the fact was absent. */
  seen: zScalar.nullable(),
  /** Who asserted the fact; "closed_world" when it was absent. */
  source: z.union([zFactSource, z.literal("closed_world")]),
});
export type ProofLeaf = z.infer<typeof zProofLeaf>;

export type ProofGroup = {
  kind: "all" | "any" | "none";
  holds: boolean;
  children: ProofNode[];
};
export type ProofNode = ProofLeaf | ProofGroup;

export const zProofNode: z.ZodType<ProofNode, ProofNode> = z.lazy(() =>
  z.union([
    zProofLeaf,
    z.strictObject({
      kind: z.enum(["all", "any", "none"]),
      holds: z.boolean(),
      children: z.array(zProofNode),
    }),
  ]),
);

export const zRuleProof = z.strictObject({
  rule: z.string(),
  priority: z.number(),
  tree: zProofNode,
});

/**
 * A rule proof carries the winning rule's condition tree. A default proof lists every rule for
 * the property with the tree that failed, so "nothing matched" is itself shown, not asserted.
 */
export const zProof = z.discriminatedUnion("via", [
  z.strictObject({
    via: z.literal("rule"),
    rule: z.string(),
    priority: z.number(),
    explanation: z.string(),
    tree: zProofNode,
  }),
  z.strictObject({
    via: z.literal("default"),
    explanation: z.string(),
    unmatched: z.array(zRuleProof),
  }),
]);

/** The leaves of a proof tree, depth first; handy for display and tests. */
export function proofLeaves(node: ProofNode): ProofLeaf[] {
  if (node.kind === "leaf") return [node];
  return node.children.flatMap(proofLeaves);
}

function formatScalar(value: Scalar): string {
  return typeof value === "string" ? value : String(value);
}

function formatExpected(expected: Scalar | Scalar[]): string {
  return Array.isArray(expected) ? `(${expected.map(formatScalar).join(" ")})` : formatScalar(expected);
}

function formatSource(leaf: ProofLeaf): string {
  return leaf.source === "closed_world" ? "absent: closed world" : `asserted by ${describeSource(leaf.source)}`;
}

function renderNode(node: ProofNode, prefix: string, out: string[]): void {
  const children = node.kind === "leaf" ? [] : node.children;
  children.forEach((child, index) => {
    const last = index === children.length - 1;
    const branch = last ? "└─ " : "├─ ";
    const mark = child.holds ? "" : "  [fails]";
    if (child.kind === "leaf") {
      const seen = child.seen === null ? "" : `${formatScalar(child.seen)} `;
      out.push(
        `${prefix}${branch}${child.property} ${seen}${child.test} ${formatExpected(child.expected)}  (${formatSource(child)})${mark}`,
      );
    } else {
      out.push(`${prefix}${branch}${child.kind}${mark}`);
      renderNode(child, prefix + (last ? "   " : "│  "), out);
    }
  });
}

/** Renders a tree as indented text; the root group is implied by the rule's line. */
export function renderProofTree(tree: ProofNode): string[] {
  const out: string[] = [];
  // A single leaf or an `all` at the root reads naturally as a list under the rule line.
  const root: ProofGroup =
    tree.kind === "all" ? tree : { kind: "all", holds: tree.holds, children: [tree] };
  renderNode(root, "", out);
  return out;
}
