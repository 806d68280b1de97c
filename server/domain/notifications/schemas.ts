import { z } from "zod";
import { NotificationKind } from "@/server/db/generated/enums";

// Shared by the domain, the router and the UI (components may import `**/schemas` files).

export const zNotificationKind = z.enum(NotificationKind);

export const notificationKindLabel: Record<NotificationKind, string> = {
  fix_loop_escalated: "Fix loop escalated",
  triage_escalated: "Triage escalated",
  triage_rollback: "Triage rollback",
  write_back_failed: "Write-back failed",
};

/** Notifications per page of /notifications (the server-rendered first page and the client agree). */
export const INBOX_PAGE_SIZE = 30;

/** A console path: one leading slash, no scheme or host (`//evil.example` is refused). */
export const zConsolePath = z
  .string()
  .max(500)
  .regex(/^\/(?![/\\])[^\s]*$/, "must be a console path such as /runs/<id>");

const clip = (s: string, max: number) => (s.length > max ? `${s.slice(0, max - 1)}…` : s);

export const zNotifyInput = z.object({
  kind: zNotificationKind,
  repositoryId: z.string().min(1),
  // Long text is cut, not refused: an escalation must not fail because a PR title was long.
  title: z.string().trim().min(1).transform((s) => clip(s, 200)),
  body: z.string().transform((s) => clip(s, 20_000)),
  href: zConsolePath,
  runId: z.string().min(1).nullish(),
  pullRequestId: z.string().min(1).nullish(),
  dedupeKey: z.string().min(1).max(500),
});
