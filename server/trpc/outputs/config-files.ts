import { z } from "zod";
import { zFileRule } from "@/server/domain/config-files/triggers-file";
import { zStackInput } from "@/server/domain/stacks/schemas";

// What the CLI's export|apply answers (server/domain/config-files/): an export is the file
// apply takes, entry by entry (without the file's count bound, so a large export still leaves),
// and a plan names each entry's action and changes.

export const zStacksExport = z.object({ stacks: z.array(zStackInput) });
export const zTriggersExport = z.object({ triggers: z.array(zFileRule) });

export const zFilePlan = z.object({
  dryRun: z.boolean(),
  entries: z.array(
    z.object({
      name: z.string(),
      action: z.enum(["create", "update", "unchanged"]),
      changes: z.array(z.object({ path: z.string(), before: z.string().nullable(), after: z.string().nullable() })),
      version: z.number().int().nullable(),
    }),
  ),
});
