import type { Db } from "@/server/db";
import { acceptInvitationOnSignUp, hasOpenInvitation } from "@/server/domain/users/invitations";
import type { GitHubSignInProfile } from "./github";

// Who may have an account. better-auth asks here before it creates a user (any method) and on
// every GitHub sign-in (user.validateUserInfo):
//  - email and password: only when AIRLOCK_EMAIL_SIGN_UP is on (the endpoint is off as well);
//    otherwise accounts come from an admin or an invitation (server/domain/users), not from here;
//  - GitHub: a new account needs an open invitation for one of the GitHub account's *verified*
//    emails (an unverified one proves nothing), or an active membership of AIRLOCK_GITHUB_ORG
//    (and AIRLOCK_GITHUB_TEAM). An account admitted by membership is refused once it is no
//    longer a member. A stranger gets no account, no session, nothing.
// Anything else better-auth might create a user through is refused.

export type AdmissionSettings = { emailSignUp: boolean; org: string | null; team: string | null };

type Verdict = void | { error: string; errorDescription: string };

const notInvited = (s: AdmissionSettings): Verdict => ({
  error: "not_invited",
  errorDescription: s.org
    ? `This GitHub account is neither invited to Airlock nor a member of ${s.org}${s.team ? `/${s.team}` : ""}. Ask an Airlock admin for an invitation.`
    : "This GitHub account is not invited to Airlock. Ask an Airlock admin for an invitation.",
});

export async function admitUser(
  db: Db,
  settings: AdmissionSettings,
  data: { user: { id?: unknown; email?: unknown }; source: { action: string; method: string; oauth?: { providerId: string; profile?: Record<string, unknown> } } },
): Promise<Verdict> {
  const { source } = data;
  const github = source.method === "oauth" && source.oauth?.providerId === "github" ? (source.oauth.profile as GitHubSignInProfile | undefined) : undefined;
  if (source.action === "create-user") {
    if (source.method === "email-password") {
      return settings.emailSignUp ? undefined : { error: "sign_up_disabled", errorDescription: "Accounts are by invitation: ask an Airlock admin." };
    }
    if (!github) return { error: "sign_up_disabled", errorDescription: "Accounts are by invitation: ask an Airlock admin." };
    const email = typeof data.user.email === "string" ? data.user.email.toLowerCase() : "";
    if (github.verifiedEmails.includes(email) && (await hasOpenInvitation(db, email))) return undefined;
    if (github.orgMember === true) return undefined;
    return notInvited(settings);
  }
  // A returning GitHub user admitted as a member stays only while they are one.
  if (github && source.action === "sign-in" && github.orgMember === false && typeof data.user.id === "string") {
    const user = await db.user.findUnique({ where: { id: data.user.id }, select: { admittedVia: true } });
    if (user?.admittedVia === "github_org") {
      return { error: "no_longer_member", errorDescription: `This GitHub account is no longer a member of ${settings.org}${settings.team ? `/${settings.team}` : ""}.` };
    }
  }
  return undefined;
}

/** After better-auth created a user: an invitation for the email is used; otherwise, how they came. */
export async function afterUserCreated(db: Db, user: { id: string; email: string }, method: "github" | "sign_up") {
  if (method === "github" && (await acceptInvitationOnSignUp(db, user))) return;
  await db.user.update({ where: { id: user.id }, data: { admittedVia: method === "github" ? "github_org" : "sign_up" } });
}
