import { z } from "zod";
import { RepoRole } from "@/server/db/generated/enums";
import { zId } from "@/server/lib/ids";

// Inputs of the API-token settings (no Node imports: the settings form uses them too).

export const zTokenRole = z.enum(RepoRole);
export const zTokenKind = z.enum(["personal", "service"]);

export const zCreateApiTokenInput = z.object({
  name: z.string().trim().min(1, "A token needs a name").max(100),
  kind: zTokenKind,
  role: zTokenRole,
  repositoryIds: z.array(zId).min(1, "Name at least one repository").max(200),
  /** Days until it stops working; absent: until revoked. */
  expiresInDays: z.int().min(1).max(366).optional(),
});

export const zApiTokenIdInput = z.object({ tokenId: zId });
