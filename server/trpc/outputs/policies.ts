import { z } from "zod";
import { PolicyKind } from "@/server/db/generated/enums";
import { zPolicyDecision } from "@/server/domain/policy/decision";
import { zPolicyDefinition } from "@/server/domain/policy/schemas";
import { zPolicyName, zScalar } from "@/server/domain/policy/model";

// What the policy pages and the proofs read (server/domain/policy/): definitions, their reviews
// (model violations, then the three checks), diffs between versions, and stored decisions with
// their proofs, each decision parsed with the domain's zPolicyDecision.

const zPerson = z.object({ id: z.string(), name: z.string(), email: z.string() });

/** One region of the fact space (checks/region.ts): the cells each listed property is in, and an example. */
const zRegion = z.object({
  where: z.array(
    z.object({
      property: z.string(),
      cells: z.array(
        z.discriminatedUnion("kind", [
          z.object({ kind: z.literal("absent"), label: z.string() }),
          z.object({ kind: z.literal("value"), value: zScalar, label: z.string() }),
          z.object({ kind: z.literal("range"), min: z.number().nullable(), max: z.number().nullable(), label: z.string() }),
          z.object({ kind: z.literal("other"), except: z.array(z.string()), label: z.string() }),
        ]),
      ),
    }),
  ),
  // Property -> value: keyed by the policy's own property names (outputs.test.ts names this path).
  example: z.record(zPolicyName, zScalar),
});

const policyIssueConstraints = [
  "schema",
  "duplicate_property",
  "duplicate_value",
  "bounds_inverted",
  "duplicate_rule",
  "unknown_property",
  "value_not_in_enum",
  "wrong_type",
  "out_of_bounds",
  "comparison_needs_integer",
  "condition_on_rules_only",
  "conclusion_not_rules_only",
  "default_not_rules_only",
  "duplicate_default",
  "missing_default",
] as const;

/** What the editor and the policy pages show beside a definition (review.ts). */
export const zPolicyReview = z.object({
  issues: z.array(z.object({ constraint: z.enum(policyIssueConstraints), rule: z.string().nullable(), path: z.array(z.union([z.string(), z.number()])), message: z.string() })),
  checks: z
    .object({
      conflicts: z.array(
        z.object({
          property: z.string(),
          rules: z.tuple([z.string(), z.string()]),
          conclusions: z.tuple([zScalar, zScalar]),
          picked: z.string(),
          decidedBy: z.enum(["priority", "order"]),
          region: zRegion,
        }),
      ),
      gaps: z.array(z.object({ property: z.string(), region: zRegion, fallback: z.object({ value: zScalar, explanation: z.string() }) })),
      vacuous: z.array(z.object({ property: z.string(), rule: z.string(), reason: z.enum(["never_matches", "redundant", "overridden"]), overriddenBy: z.array(z.string()) })),
    })
    .nullable(),
  coverage: z.array(z.object({ property: z.string(), rule: z.string(), wins: zRegion.nullable() })),
  checkError: z.string().nullable(),
});

const zPolicyHead = { id: z.string(), kind: z.enum(PolicyKind), name: z.string(), description: z.string(), version: z.number().int(), updatedAt: z.date() };
const zVersionRef = z.object({ version: z.number().int(), digest: z.string() });

const zStoredPolicy = z.object({
  ...zPolicyHead,
  current: zVersionRef.extend({ id: z.string(), createdAt: z.date(), createdById: z.string().nullable(), definition: zPolicyDefinition }),
});

export const zPolicyList = z.array(
  z.object({
    ...zPolicyHead,
    digest: z.string(),
    subject: z.string(),
    ruleCount: z.number().int(),
    review: zPolicyReview,
    fromShipped: z.object({ added: z.array(z.string()), removed: z.array(z.string()), changed: z.array(z.string()) }).nullable(),
  }),
);

export const zPolicyDetail = zStoredPolicy.extend({ review: zPolicyReview, canEdit: z.boolean() });

export const zPolicyVersions = z.array(zVersionRef.extend({ id: z.string(), createdAt: z.date(), createdBy: zPerson.nullable(), ruleCount: z.number().int() }));

const zFieldChange = z.object({ field: z.string(), before: z.string(), after: z.string() });
const zNamedSummary = z.object({ name: z.string(), summary: z.string() });

/** Two definitions' differences, as people review them (diff.ts). */
const zPolicyDiff = z.object({
  rules: z.object({
    added: z.array(zNamedSummary),
    removed: z.array(zNamedSummary),
    changed: z.array(z.object({ name: z.string(), changes: z.array(zFieldChange) })),
    reordered: z.boolean(),
  }),
  properties: z.object({
    added: z.array(z.string()),
    removed: z.array(z.string()),
    changed: z.array(z.object({ name: z.string(), before: z.string(), after: z.string() })),
  }),
  defaults: z.array(z.object({ property: z.string(), changes: z.array(zFieldChange) })),
  meta: z.array(zFieldChange),
  changed: z.boolean(),
});

export const zPolicyVersionDiff = zPolicyDiff.extend({ from: zVersionRef, to: zVersionRef });
export const zSavedPolicyVersion = z.object({ policy: zStoredPolicy, diff: zPolicyDiff, review: zPolicyReview });

const factConstraints = ["unknown_property", "value_not_in_enum", "wrong_type", "out_of_bounds", "provenance_refused", "cardinality", "unknown_source"] as const;
const zFactViolations = z.array(z.object({ constraint: z.enum(factConstraints), property: z.string(), message: z.string() }));

/** The editor's sandbox: refused facts, else the decisions (review.ts). */
export const zPolicyTry = z.object({ refused: zFactViolations, decisions: z.array(zPolicyDecision) });

/** A stored decision with its proof (decisions.ts). */
export const zDecisionView = z.object({
  id: z.string(),
  runId: z.string().nullable(),
  subject: z.string(),
  createdAt: z.date(),
  policyName: z.string(),
  policyVersionId: z.string(),
  decision: zPolicyDecision,
});

/** A stored decision evaluated again, against its own version or today's (decide.ts). */
export const zRecheckedDecision = z.object({
  decisionId: z.string(),
  against: z.enum(["stored", "current"]),
  version: zVersionRef.extend({ id: z.string() }),
  matches: z.boolean(),
  stored: z.object({ value: zScalar, rule: z.string().nullable() }),
  current: zPolicyDecision.nullable(),
  refused: zFactViolations,
  policyChanged: z.boolean().nullable(),
});
