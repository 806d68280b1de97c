import { describe, expect, it } from "vitest";
import { decideActorPermission, type PermissionInput } from "./actor-permission";

describe("decideActorPermission", () => {
  it.each<[PermissionInput, boolean, string]>([
    [{ association: "OWNER", via: "comment" }, true, "OWNER: the repository owner"],
    [{ association: "MEMBER", via: "comment" }, true, "MEMBER: a member of the organization"],
    [{ association: "COLLABORATOR", via: "comment" }, true, "COLLABORATOR: a repository collaborator"],
    [{ association: "CONTRIBUTOR", via: "comment" }, false, "CONTRIBUTOR: a past contributor without write access; only OWNER, MEMBER or COLLABORATOR may dispatch"],
    [{ association: "FIRST_TIMER", via: "comment" }, false, "FIRST_TIMER: a first-time GitHub user; only OWNER, MEMBER or COLLABORATOR may dispatch"],
    [{ association: "FIRST_TIME_CONTRIBUTOR", via: "comment" }, false, "FIRST_TIME_CONTRIBUTOR: a first-time contributor; only OWNER, MEMBER or COLLABORATOR may dispatch"],
    [{ association: "MANNEQUIN", via: "comment" }, false, "MANNEQUIN: a placeholder (mannequin) account; only OWNER, MEMBER or COLLABORATOR may dispatch"],
    [{ association: "NONE", via: "comment" }, false, "NONE: not associated with the repository; only OWNER, MEMBER or COLLABORATOR may dispatch"],
    [{ association: null, via: "comment" }, false, "no author association or Airlock role is known for this actor"],
    [{ association: null, via: "label" }, true, "applied a label, which GitHub allows only with triage access or more"],
    [{ association: null, via: "manual", airlockRole: "maintainer" }, true, "Airlock maintainer of the repository"],
    [{ association: null, via: "manual", airlockRole: "admin" }, true, "Airlock admin of the repository"],
    [{ association: null, via: "manual", airlockRole: "viewer" }, false, "Airlock viewer of the repository; dispatch needs maintainer or admin"],
    [{ association: "NONE", via: "comment", airlockRole: "maintainer" }, true, "Airlock maintainer of the repository"],
    [{ association: "OWNER", via: "comment", isBot: true }, false, "bots cannot dispatch agent runs (prevents bot-to-bot loops)"],
    [{ association: null, via: "label", isBot: true }, false, "bots cannot dispatch agent runs (prevents bot-to-bot loops)"],
  ])("%j -> %s", (input, allowed, reason) => {
    expect(decideActorPermission(input)).toEqual({ allowed, reason });
  });
});
