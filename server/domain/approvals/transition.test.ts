import { describe, expect, it } from "vitest";
import { ApprovalStatus } from "@/server/db/generated/enums";
import { AppError } from "@/server/errors";
import { approvalTransitions, assertApprovalTransition, canTransitionApproval } from "./transition";

// The legal approval transitions written out independently of the table, so a change to the
// table has to be made twice on purpose.
const legal = new Set(["pending->approved", "pending->rejected", "pending->expired", "approved->executed", "approved->failed", "failed->approved"]);
const statuses = Object.values(ApprovalStatus);

describe("approval lifecycle", () => {
  it("lists every status, and exactly the legal edges, each with a reason", () => {
    expect(Object.keys(approvalTransitions).sort()).toEqual([...statuses].sort());
    for (const from of statuses) {
      for (const to of statuses) {
        expect(canTransitionApproval(from, to), `${from}->${to}`).toBe(legal.has(`${from}->${to}`));
        const why = approvalTransitions[from][to];
        if (why !== undefined) expect(why.length).toBeGreaterThan(10);
      }
    }
  });

  it("refuses an illegal edge with a conflict that names the legal ones", () => {
    expect(() => assertApprovalTransition("executed", "approved")).toThrow(AppError);
    expect(() => assertApprovalTransition("rejected", "approved")).toThrow(/rejected is final/);
    expect(() => assertApprovalTransition("approved", "rejected")).toThrow(/can only become executed, failed/);
    expect(() => assertApprovalTransition("failed", "approved")).not.toThrow();
  });
});
