import { z } from "zod";
import { PolicyKind } from "@/server/db/generated/enums";
import { zFacts, zPolicyDefinition } from "@/server/domain/policy/schemas";
import { reviewPolicy, tryPolicy } from "@/server/domain/policy/review";
import { auditActorOf } from "@/server/domain/actor";
import {
  diffPolicyVersions,
  getPolicy,
  getPolicyVersion,
  listPolicies,
  listPolicyVersions,
  savePolicyVersion,
} from "@/server/domain/policy/store";
import { definePolicy } from "@/server/domain/policy/validate";
import { adminProcedure, memberProcedure, router } from "../init";
import { zPolicyDetail, zPolicyList, zPolicyReview, zPolicyTry, zPolicyVersionDiff, zPolicyVersions, zSavedPolicyVersion } from "../outputs/policies";

// Policies are global: anyone with a role on some repository reads them and may try them; only an Airlock admin
// saves a new version.

const zPolicyKind = z.enum(PolicyKind);
const zVersion = z.int().positive();

export const policiesRouter = router({
  list: memberProcedure.output(zPolicyList).query(({ ctx }) => listPolicies({ db: ctx.db })),

  byKind: memberProcedure.input(z.object({ kind: zPolicyKind })).output(zPolicyDetail).query(async ({ ctx, input }) => {
    const policy = await getPolicy({ db: ctx.db, kind: input.kind });
    return { ...policy, review: reviewPolicy(policy.current.definition), canEdit: ctx.user.isAdmin };
  }),

  // check and tryIt change nothing but are mutations: a definition is too large for a GET URL.

  /** The editor's live check of an unsaved definition: model violations, then the three checks. */
  check: memberProcedure
    .input(z.object({ definition: zPolicyDefinition }))
    .output(zPolicyReview)
    .mutation(({ input }) => reviewPolicy(input.definition)),

  /**
   * Evaluates an unsaved definition (or a saved version, or the current one) against entered
   * facts. Nothing is stored: this is the editor's sandbox, not a decision.
   */
  tryIt: memberProcedure
    .input(
      z.object({
        kind: zPolicyKind,
        definition: zPolicyDefinition.optional(),
        version: zVersion.optional(),
        facts: zFacts,
        property: z.string().min(1).max(64).optional(),
      }),
    )
    .output(zPolicyTry)
    .mutation(async ({ ctx, input }) => {
      const { facts, property } = input;
      // An unsaved definition that breaks its model is refused (UNPROCESSABLE, issues listed).
      if (input.definition) return tryPolicy({ definition: definePolicy(input.definition), facts, property });
      const saved = input.version
        ? await getPolicyVersion({ db: ctx.db, kind: input.kind, version: input.version })
        : (await getPolicy({ db: ctx.db, kind: input.kind })).current;
      return tryPolicy({ definition: saved.definition, facts, property, version: saved.version, digest: saved.digest });
    }),

  save: adminProcedure
    .input(z.object({ kind: zPolicyKind, expectedVersion: zVersion, definition: zPolicyDefinition }))
    .output(zSavedPolicyVersion)
    .mutation(({ ctx, input }) =>
      savePolicyVersion({
        db: ctx.db,
        actor: auditActorOf(ctx.user),
        kind: input.kind,
        definition: input.definition,
        expectedVersion: input.expectedVersion,
      }),
    ),

  versions: memberProcedure
    .input(z.object({ kind: zPolicyKind }))
    .output(zPolicyVersions)
    .query(({ ctx, input }) => listPolicyVersions({ db: ctx.db, kind: input.kind })),

  diff: memberProcedure
    .input(z.object({ kind: zPolicyKind, from: zVersion, to: zVersion }))
    .output(zPolicyVersionDiff)
    .query(({ ctx, input }) => diffPolicyVersions({ db: ctx.db, kind: input.kind, from: input.from, to: input.to })),
});
