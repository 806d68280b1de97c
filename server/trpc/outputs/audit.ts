import { z } from "zod";
import { zPage } from "./shared";
import { storedJson } from "./stored-json";

// The audit log's entries (server/domain/audit.ts), named for a reader.

export const zAuditPage = zPage(
  z.object({
    id: z.string(),
    actor: z.string(),
    actorUserId: z.string().nullable(),
    actorName: z.string().nullable(),
    action: z.string(),
    objectType: z.string(),
    objectId: z.string(),
    object: z.object({ label: z.string(), href: z.string().nullable() }),
    repositoryId: z.string().nullable(),
    repositoryName: z.string().nullable(),
    // What the change recorded, as each action writes it (no one schema: the page words it,
    // components/audit/sentence.ts). Open JSON on purpose: outputs.test.ts names this path.
    detail: storedJson(z.json()),
    createdAt: z.date(),
  }),
);
