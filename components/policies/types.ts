import type { inferRouterOutputs } from "@trpc/server";
import type { AppRouter } from "@/server/trpc/root";

// What the policy pages receive from tRPC, named once for the components.

type Outputs = inferRouterOutputs<AppRouter>["policies"];

export type PolicyListItem = Outputs["list"][number];
export type PolicyDetail = Outputs["byKind"];
export type PolicyReview = Outputs["check"];
export type PolicyDiff = Outputs["diff"];
export type PolicyCheckStatus = "ok" | "warnings" | "invalid" | "unchecked";

/** A one-word status for a review: invalid (model violations) > warnings (any finding) > ok. */
export function reviewStatus(review: PolicyReview): PolicyCheckStatus {
  if (review.issues.length > 0) return "invalid";
  if (!review.checks) return "unchecked";
  const { conflicts, gaps, vacuous } = review.checks;
  return conflicts.length + gaps.length + vacuous.length > 0 ? "warnings" : "ok";
}
