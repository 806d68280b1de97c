import { z } from "zod";
import { RunStatus } from "@/server/db/generated/enums";
import { zStackSpec } from "@/server/domain/stacks/spec-schema";
import { zRight } from "./shared";

// What the stacks pages read (server/domain/stacks/stacks-presenter.ts): a stack's spec names
// the secrets, config maps and environment variables it asks for, never their values.

const zAdapterKind = z.enum(zStackSpec.shape.adapter.options.map((o) => o.shape.kind.value) as [StackAdapterKind, ...StackAdapterKind[]]);
type StackAdapterKind = z.infer<typeof zStackSpec>["adapter"]["kind"];

export const zStackList = z.object({
  stacks: z.array(
    z.object({
      id: z.string(),
      name: z.string(),
      description: z.string(),
      version: z.number().int(),
      archivedAt: z.date().nullable(),
      updatedAt: z.date(),
      modelProvider: zStackSpec.shape.modelProvider,
      model: z.string(),
      adapter: zAdapterKind,
      approvalMode: zStackSpec.shape.approvalMode.unwrap(),
      usedByRules: z.number().int(),
      lastRun: z.object({ id: z.string(), number: z.number().int(), status: z.enum(RunStatus), createdAt: z.date() }).nullable(),
    }),
  ),
  canCreate: zRight,
});

export const zStackDetail = z.object({
  id: z.string(),
  name: z.string(),
  description: z.string(),
  version: z.number().int(),
  archivedAt: z.date().nullable(),
  digest: z.string(),
  spec: zStackSpec,
  versions: z.array(z.object({ version: z.number().int(), digest: z.string(), createdAt: z.date(), createdBy: z.string().nullable() })),
  rules: z.array(z.object({ id: z.string(), name: z.string(), kind: z.string(), enabled: z.boolean(), repository: z.string().nullable() })),
  canEdit: zRight,
  canCreate: zRight,
});

export const zStackOption = z.object({ id: z.string(), name: z.string(), version: z.number().int() });
export const zStackOptions = z.array(zStackOption);

export const zCreatedStack = z.object({ id: z.string(), name: z.string(), version: z.number().int(), digest: z.string() });
export const zStackArchived = z.object({ id: z.string(), archivedAt: z.date().nullable() });

/** Two specs' differences (server/domain/stacks/diff.ts). */
const zStackSpecDiff = z.object({
  changes: z.array(z.object({ path: z.string(), kind: z.enum(["added", "removed", "changed"]), before: z.string().nullable(), after: z.string().nullable() })),
  promptTemplate: z.array(z.object({ op: z.enum(["same", "added", "removed"]), text: z.string() })).nullable(),
  changed: z.boolean(),
});
export const zStackVersionDiff = zStackSpecDiff.extend({ from: z.number().int(), to: z.number().int() });
export const zUpdatedStack = zCreatedStack.extend({ diff: zStackSpecDiff });
