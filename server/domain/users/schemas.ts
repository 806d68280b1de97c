// Accounts by invitation: the users settings page's forms and the procedures validate with these
// same schemas. Nothing here needs Node.
import { z } from "zod";
import { zRepoRole } from "@/server/domain/ci-events/schemas";
import { zId } from "@/server/lib/ids";

export const MIN_PASSWORD = 8;
export const MAX_PASSWORD = 128;

const zEmail = z.email("An email address").max(320).trim().toLowerCase();
const zName = z.string().trim().min(1, "Required").max(100, "At most 100 characters");
const zPassword = z.string().min(MIN_PASSWORD, `At least ${MIN_PASSWORD} characters`).max(MAX_PASSWORD, `At most ${MAX_PASSWORD} characters`);

/** Roles given with an account: global admin, and a role per repository. */
export const zGrantedRoles = z
  .array(z.object({ repositoryId: zId, role: zRepoRole }))
  .max(200, "At most 200 repositories")
  .refine((roles) => new Set(roles.map((r) => r.repositoryId)).size === roles.length, "One role per repository");
export type GrantedRoles = z.infer<typeof zGrantedRoles>;

export const INVITATION_HOURS = [24, 72, 168, 720] as const;

export const zInvitationInput = z.object({
  email: zEmail,
  isAdmin: z.boolean(),
  roles: zGrantedRoles,
  /** How long the link works. */
  expiresInHours: z.literal(INVITATION_HOURS),
});

export const zCreateUserInput = z.object({
  email: zEmail,
  name: zName,
  /** A first password the admin hands over; the person signs in with it. */
  password: zPassword,
  isAdmin: z.boolean(),
  roles: zGrantedRoles,
});

/** The one-time token of an invitation link (43 characters of base64url). */
export const zInvitationToken = z.string().min(20).max(100).regex(/^[A-Za-z0-9_-]+$/, "Not an invitation link");

export const zAcceptInvitationInput = z.object({ token: zInvitationToken, name: zName, password: zPassword });
export type AcceptInvitationFormValues = z.input<typeof zAcceptInvitationInput>;

export const zSetAdminInput = z.object({ userId: zId, isAdmin: z.boolean() });
