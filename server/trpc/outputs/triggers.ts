import { z } from "zod";
import { RepoRole } from "@/server/db/generated/enums";
import { zStackOption } from "./stacks";

// What the trigger rule pages read (server/domain/triggers/rules-presenter.ts).

export const zTriggerFormOptions = z.object({
  repositories: z.array(z.object({ id: z.string(), fullName: z.string(), autoRunOnFailedCheck: z.boolean(), role: z.enum(RepoRole).nullable(), canManage: z.boolean() })),
  stacks: z.array(zStackOption),
  canManageGlobal: z.boolean(),
});
