// An audit entry as a sentence: "Maya Chen approved push commits of run #12", then what the
// entry's detail says in words (a reason, what changed from what to what), never raw JSON or ids.

const verbs: Record<string, string> = {
  "run.create": "created",
  "run.dispatch": "dispatched",
  "run.dismiss": "dismissed",
  "run.cancel": "cancelled",
  "run.retry": "retried",
  "run.resume": "resumed",
  "run.fork": "forked",
  "run.attach_context": "attached context to",
  "approval.approve": "approved",
  "approval.reject": "rejected",
  "approval.expire": "let expire",
  "approval.stale": "marked stale",
  "approval.push_protection_override": "overrode push protection on",
  "writeback.exempt": "ran an exempt write-back for",
  "writeback.retry": "retried the write-back of",
  "fixloop.reopen": "re-opened for agents",
  "repository.run_check": "ran the check of",
  "repository.update_policy": "changed the policy of",
  "policy.upgrade": "upgraded to the shipped version",
  "membership.create": "added a member to",
  "stack.save_version": "saved a new version of",
  "user.invite": "invited",
};
const suffixVerbs: Record<string, string> = { create: "created", update: "updated", delete: "deleted", disable: "disabled", enable: "enabled", archive: "archived", restore: "restored", save: "saved" };

/** "approved", "dispatched", "created"...: the action as a verb. */
export function auditVerb(action: string): string {
  const known = verbs[action];
  if (known) return known;
  const suffix = action.split(".").at(-1) ?? action;
  return suffixVerbs[suffix] ?? `did ${action.replaceAll(/[._]/g, " ")} on`;
}

const humanKey = (k: string) => k.replace(/([a-z])([A-Z])/g, "$1 $2").replaceAll("_", " ").toLowerCase();
// Ids and digests mean nothing to a reader (the object's link names it already).
const hidden = (k: string, v: unknown) => /Id$|^id$|Digest$|digest$/.test(k) || (typeof v === "string" && /^(sha256:)?[0-9a-f]{40,64}$|^c[0-9a-z]{24}$/.test(v));

function value(v: unknown): string {
  if (v === null || v === undefined) return "none";
  if (Array.isArray(v)) return v.length === 0 ? "none" : v.map(value).join(", ");
  if (typeof v === "object") return Object.entries(v as Record<string, unknown>).map(([k, x]) => `${humanKey(k)} ${value(x)}`).join(", ");
  return String(v).replaceAll("_", " ");
}

/** The entry's detail in words, bounded; "" when there is nothing a reader needs. */
export function auditDetail(detail: unknown, max = 300): string {
  if (!detail || typeof detail !== "object" || Array.isArray(detail)) return "";
  const d = detail as Record<string, unknown>;
  const parts: string[] = [];
  for (const [k, v] of Object.entries(d)) {
    if (k === "reason" || hidden(k, v)) continue;
    if (v && typeof v === "object" && !Array.isArray(v) && "from" in v && "to" in v) {
      const c = v as { from: unknown; to: unknown };
      parts.push(`${humanKey(k)}: ${value(c.from)} → ${value(c.to)}`);
    } else if (k === "changes" && Array.isArray(v)) {
      parts.push(...v.map(value));
    } else {
      parts.push(`${humanKey(k)} ${value(v)}`);
    }
  }
  if (typeof d.reason === "string" && d.reason) parts.unshift(`“${d.reason}”`);
  const text = parts.join("; ");
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}
