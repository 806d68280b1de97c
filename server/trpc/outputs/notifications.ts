import { z } from "zod";
import { NotificationKind } from "@/server/db/generated/enums";
import { zRepositoryRef } from "./repositories";
import { zPage } from "./shared";

// The bell's inbox (server/domain/notifications/inbox.ts).

export const zNotificationPage = zPage(
  z.object({
    id: z.string(),
    kind: z.enum(NotificationKind),
    title: z.string(),
    body: z.string(),
    href: z.string(),
    runId: z.string().nullable(),
    pullRequestId: z.string().nullable(),
    repository: zRepositoryRef,
    createdAt: z.date(),
    read: z.boolean(),
  }),
);
