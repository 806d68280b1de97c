// Who may dispatch an agent from a comment or label. Pure: the caller supplies what it knows.
import type { AuthorAssociation, RepoRole } from "@/server/domain/ci-events/enums";

export type PermissionDecision = { allowed: boolean; reason: string };

export type PermissionInput = {
  /** GitHub's author_association of the comment/review author, when the payload has one. */
  association: AuthorAssociation | null;
  /** The actor's Airlock role on the repository, when the actor is a known Airlock user. */
  airlockRole?: RepoRole | null;
  /** Bots never dispatch: a bot answering a bot is how comment loops start. */
  isBot?: boolean;
  /**
   * How the request arrived. GitHub lets only people with triage access or more apply labels,
   * so a label is itself proof of repository access even though its payload has no association.
   */
  via: "comment" | "label" | "manual" | "review";
};

const TRUSTED_ASSOCIATIONS: ReadonlySet<AuthorAssociation> = new Set(["OWNER", "MEMBER", "COLLABORATOR"]);

const ASSOCIATION_WORDS: Record<AuthorAssociation, string> = {
  OWNER: "the repository owner",
  MEMBER: "a member of the organization",
  COLLABORATOR: "a repository collaborator",
  CONTRIBUTOR: "a past contributor without write access",
  FIRST_TIMER: "a first-time GitHub user",
  FIRST_TIME_CONTRIBUTOR: "a first-time contributor",
  MANNEQUIN: "a placeholder (mannequin) account",
  NONE: "not associated with the repository",
};

/**
 * OWNER, MEMBER and COLLABORATOR may dispatch; so may Airlock maintainers and admins. Everyone
 * else is refused with a reason naming what they are. Unknown means refused (fail closed).
 */
export function decideActorPermission(input: PermissionInput): PermissionDecision {
  if (input.isBot) {
    return { allowed: false, reason: "bots cannot dispatch agent runs (prevents bot-to-bot loops)" };
  }
  if (input.airlockRole === "maintainer" || input.airlockRole === "admin") {
    return { allowed: true, reason: `Airlock ${input.airlockRole} of the repository` };
  }
  if (input.association && TRUSTED_ASSOCIATIONS.has(input.association)) {
    return { allowed: true, reason: `${input.association}: ${ASSOCIATION_WORDS[input.association]}` };
  }
  if (input.association) {
    return {
      allowed: false,
      reason: `${input.association}: ${ASSOCIATION_WORDS[input.association]}; only OWNER, MEMBER or COLLABORATOR may dispatch`,
    };
  }
  if (input.via === "label") {
    return { allowed: true, reason: "applied a label, which GitHub allows only with triage access or more" };
  }
  if (input.airlockRole === "viewer") {
    return { allowed: false, reason: "Airlock viewer of the repository; dispatch needs maintainer or admin" };
  }
  return { allowed: false, reason: "no author association or Airlock role is known for this actor" };
}
