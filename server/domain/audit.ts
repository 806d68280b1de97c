import { afterCommit, type Db, type Prisma } from "@/server/db";
import { observeAudit } from "@/server/observability/observe-events";

export type AuditActor = { userId: string | null; label: string };

/** One audit row per state change a person causes; call it inside the change's transaction. */
export function recordAudit(
  db: Db,
  entry: {
    actor: AuditActor;
    action: string;
    objectType: string;
    objectId: string;
    repositoryId?: string | null;
    detail?: Prisma.InputJsonValue;
  },
) {
  return db.auditEntry.create({
    data: {
      actorUserId: entry.actor.userId,
      actor: entry.actor.label,
      action: entry.action,
      objectType: entry.objectType,
      objectId: entry.objectId,
      repositoryId: entry.repositoryId ?? null,
      detail: entry.detail,
    },
  }).then((row) => {
    afterCommit(db, () => observeAudit(entry));
    return row;
  });
}

export type AuditFilter = { repositoryId?: string; action?: string; actor?: string; objectType?: string; objectId?: string };

/**
 * Audit entries, newest first, keyset-paginated on (createdAt, id). Scoped to
 * `repositoryIds`; entries with no repository (global changes) only for "all".
 */
export async function listAudit(opts: {
  db: Db;
  repositoryIds: string[] | "all";
  filter: AuditFilter;
  cursor?: { createdAt: Date; id: string } | null;
  limit: number;
}) {
  const { filter } = opts;
  const rows = await opts.db.auditEntry.findMany({
    where: {
      AND: [
        opts.repositoryIds === "all" ? {} : { repositoryId: { in: opts.repositoryIds } },
        filter.repositoryId ? { repositoryId: filter.repositoryId } : {},
        filter.action ? { action: { startsWith: filter.action } } : {},
        filter.actor ? { actor: { contains: filter.actor, mode: "insensitive" } } : {},
        filter.objectType ? { objectType: filter.objectType } : {},
        filter.objectId ? { objectId: filter.objectId } : {},
        opts.cursor
          ? { OR: [{ createdAt: { lt: opts.cursor.createdAt } }, { createdAt: opts.cursor.createdAt, id: { lt: opts.cursor.id } }] }
          : {},
      ],
    },
    orderBy: [{ createdAt: "desc" }, { id: "desc" }],
    take: opts.limit + 1,
  });
  const items = rows.slice(0, opts.limit);
  const last = items.at(-1);
  return { items: await withNames(opts.db, items), next: rows.length > opts.limit && last ? { createdAt: last.createdAt, id: last.id } : null };
}

/** The audited object as a reader names it, and its page when it has one. */
export type AuditObject = { label: string; href: string | null };

type Row = { objectType: string; objectId: string; actorUserId: string | null; repositoryId: string | null };

const words = (s: string) => s.replaceAll("_", " ");

/**
 * Names for the page's entries, in one query per kind of object: the person behind the actor,
 * the repository, and the object ("run #12 “Repair …”", "stack claude-code-ci-diagnoser"), so an
 * entry reads as a sentence with links rather than ids. An object that no longer exists keeps
 * its type and a short id.
 */
async function withNames<T extends Row>(db: Db, items: T[]): Promise<(T & { actorName: string | null; repositoryName: string | null; object: AuditObject })[]> {
  const ids = (type: string) => [...new Set(items.filter((e) => e.objectType === type).map((e) => e.objectId))];
  const [runs, approvals, repositories, stacks, pools, rules, users] = await Promise.all([
    db.agentDispatchRun.findMany({ where: { id: { in: ids("AgentDispatchRun") } }, select: { id: true, number: true, title: true } }),
    db.approvalRequest.findMany({ where: { id: { in: ids("ApprovalRequest") } }, select: { id: true, action: true, run: { select: { number: true } } } }),
    db.repository.findMany({ where: { id: { in: [...ids("Repository"), ...items.flatMap((e) => (e.repositoryId ? [e.repositoryId] : []))] } }, select: { id: true, fullName: true } }),
    db.agentStack.findMany({ where: { id: { in: ids("AgentStack") } }, select: { id: true, name: true } }),
    db.runnerPool.findMany({ where: { id: { in: ids("RunnerPool") } }, select: { id: true, name: true } }),
    db.triggerRule.findMany({ where: { id: { in: ids("TriggerRule") } }, select: { id: true, name: true } }),
    db.user.findMany({ where: { id: { in: [...ids("User"), ...items.flatMap((e) => (e.actorUserId ? [e.actorUserId] : []))] } }, select: { id: true, name: true, email: true } }),
  ]);
  const objects = new Map<string, AuditObject>([
    ...runs.map((r) => [`AgentDispatchRun:${r.id}`, { label: `run #${r.number} “${r.title}”`, href: `/runs/${r.id}` }] as const),
    ...approvals.map((a) => [`ApprovalRequest:${a.id}`, { label: `${words(a.action)} of run #${a.run.number}`, href: `/approvals/${a.id}` }] as const),
    ...repositories.map((r) => [`Repository:${r.id}`, { label: r.fullName, href: `/settings/repositories/${r.id}` }] as const),
    ...stacks.map((s) => [`AgentStack:${s.id}`, { label: `stack ${s.name}`, href: `/stacks/${s.id}` }] as const),
    ...pools.map((p) => [`RunnerPool:${p.id}`, { label: `runner pool ${p.name}`, href: "/settings/pools" }] as const),
    ...rules.map((r) => [`TriggerRule:${r.id}`, { label: `trigger rule ${r.name}`, href: `/triggers/${r.id}` }] as const),
    ...users.map((u) => [`User:${u.id}`, { label: u.name || u.email, href: null }] as const),
  ]);
  const repoName = new Map(repositories.map((r) => [r.id, r.fullName]));
  const userName = new Map(users.map((u) => [u.id, u.name || u.email]));
  const fallback = (e: Row): AuditObject => ({ label: `${words(e.objectType.replace(/([a-z])([A-Z])/g, "$1 $2").toLowerCase())} ${e.objectId.slice(0, 10)}`, href: null });
  return items.map((e) => ({
    ...e,
    actorName: e.actorUserId ? (userName.get(e.actorUserId) ?? null) : null,
    repositoryName: e.repositoryId ? (repoName.get(e.repositoryId) ?? null) : null,
    object: objects.get(`${e.objectType}:${e.objectId}`) ?? fallback(e),
  }));
}
