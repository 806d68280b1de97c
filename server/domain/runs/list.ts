import { z } from "zod";
import type { Db, Prisma } from "@/server/db";
import { RunSource, RunStatus, TaskKind } from "@/server/db/generated/enums";
import { AppError } from "@/server/errors";

// The runs list: newest first, keyset-paginated on (createdAt, id) so a page
// boundary never skips or repeats a run while new runs arrive.

export const zRunListFilter = z.object({
  repositoryId: z.string().min(1).max(100).optional(),
  status: z.enum(RunStatus).optional(),
  taskKind: z.enum(TaskKind).optional(),
  source: z.enum(RunSource).optional(),
  stackId: z.string().min(1).max(100).optional(),
  actor: z.string().trim().min(1).max(200).optional(),
  /** Words in the title or the source object (PR title, check, workflow, branch); `#12` is a run or PR number. */
  q: z.string().trim().max(200).optional(),
});
export type RunListFilter = z.infer<typeof zRunListFilter>;

export const zRunListInput = zRunListFilter.extend({
  cursor: z.string().max(200).nullish(),
  limit: z.number().int().min(1).max(100).default(25),
});

type Cursor = { createdAt: Date; id: string };

export function encodeCursor(c: Cursor): string {
  return Buffer.from(JSON.stringify([c.createdAt.toISOString(), c.id])).toString("base64url");
}

export function decodeCursor(raw: string): Cursor {
  try {
    const [at, id] = z.tuple([z.iso.datetime(), z.string().min(1)]).parse(JSON.parse(Buffer.from(raw, "base64url").toString()));
    return { createdAt: new Date(at), id };
  } catch {
    throw new AppError("BAD_REQUEST", "The page cursor is not valid; reload the list.", { reason: "bad_cursor" });
  }
}

const runListSelect = {
  id: true,
  number: true,
  title: true,
  status: true,
  taskKind: true,
  source: true,
  actor: true,
  headSha: true,
  headBranch: true,
  isFork: true,
  origin: true,
  createdAt: true,
  updatedAt: true,
  finishedAt: true,
  costUsd: true,
  costUnknown: true,
  stackSnapshot: true,
  repository: { select: { id: true, fullName: true } },
  pullRequest: { select: { number: true, title: true } },
} satisfies Prisma.AgentDispatchRunSelect;

export type RunListItem = Prisma.AgentDispatchRunGetPayload<{ select: typeof runListSelect }>;

/** A page of runs the caller may see (`repositoryIds` "all" for a global admin). */
export async function listRuns(opts: {
  db: Db;
  repositoryIds: string[] | "all";
  input: z.output<typeof zRunListInput>;
}): Promise<{ items: (Omit<RunListItem, "costUsd" | "stackSnapshot"> & { costUsd: number; stackName: string | null })[]; nextCursor: string | null }> {
  const { db, repositoryIds, input } = opts;
  const where: Prisma.AgentDispatchRunWhereInput = {
    status: input.status,
    taskKind: input.taskKind,
    repositoryId: input.repositoryId,
    source: input.source,
    stackId: input.stackId,
    actor: input.actor,
    AND: repositoryIds === "all" ? [] : [{ repositoryId: { in: repositoryIds } }],
  };
  const text = textFilter(input.q);
  if (text) (where.AND as Prisma.AgentDispatchRunWhereInput[]).push(text);
  if (input.cursor) {
    const c = decodeCursor(input.cursor);
    (where.AND as Prisma.AgentDispatchRunWhereInput[]).push({
      OR: [{ createdAt: { lt: c.createdAt } }, { createdAt: c.createdAt, id: { lt: c.id } }],
    });
  }
  const rows = await db.agentDispatchRun.findMany({
    where,
    select: runListSelect,
    orderBy: [{ createdAt: "desc" }, { id: "desc" }],
    take: input.limit + 1,
  });
  const page = rows.slice(0, input.limit);
  const last = page.at(-1);
  return {
    items: page.map(({ costUsd, stackSnapshot, ...r }) => ({
      ...r,
      costUsd: Number(costUsd),
      stackName: typeof stackSnapshot === "object" && stackSnapshot && "name" in stackSnapshot ? String(stackSnapshot.name) : null,
    })),
    nextCursor: rows.length > input.limit && last ? encodeCursor(last) : null,
  };
}

/**
 * Text search over the run's title and its source object. Substring matches
 * scan the (already keyset-ordered) candidates; at the sizes a console lists
 * that is cheaper than keeping a trigram index current on every run insert.
 */
export function textFilter(q: string | undefined): Prisma.AgentDispatchRunWhereInput | null {
  const query = q?.trim();
  if (!query) return null;
  const contains = { contains: query, mode: "insensitive" as const };
  const or: Prisma.AgentDispatchRunWhereInput[] = [
    { title: contains },
    { headBranch: contains },
    { pullRequest: { title: contains } },
    { pipeline: { checkName: contains } },
    { pipeline: { workflowName: contains } },
  ];
  const number = /^#?(\d{1,9})$/.exec(query)?.[1];
  if (number) or.push({ number: Number(number) }, { pullRequest: { number: Number(number) } });
  return { OR: or };
}

/** Stacks and actors seen on the runs the caller may see, for the list's filter menus. */
export async function getRunFilterOptions(opts: { db: Db; repositoryIds: string[] | "all" }) {
  const visible: Prisma.AgentDispatchRunWhereInput = opts.repositoryIds === "all" ? {} : { repositoryId: { in: opts.repositoryIds } };
  const [stacks, actors] = await Promise.all([
    opts.db.agentStack.findMany({ select: { id: true, name: true }, orderBy: { name: "asc" }, take: 200 }),
    opts.db.agentDispatchRun.findMany({ where: visible, distinct: ["actor"], select: { actor: true }, orderBy: { actor: "asc" }, take: 200 }),
  ]);
  return { stacks, actors: actors.map((a) => a.actor) };
}

/** How many visible runs are in each status, under the list's other filters (for its status chips). */
export async function countRunsByStatus(opts: { db: Db; repositoryIds: string[] | "all"; filter?: Omit<RunListFilter, "status"> }) {
  const f = opts.filter ?? {};
  const text = textFilter(f.q);
  const groups = await opts.db.agentDispatchRun.groupBy({
    by: ["status"],
    where: {
      repositoryId: f.repositoryId,
      taskKind: f.taskKind,
      source: f.source,
      stackId: f.stackId,
      actor: f.actor,
      AND: [...(opts.repositoryIds === "all" ? [] : [{ repositoryId: { in: opts.repositoryIds } }]), ...(text ? [text] : [])],
    },
    _count: { _all: true },
  });
  const counts = Object.fromEntries(Object.values(RunStatus).map((s) => [s, 0])) as Record<RunStatus, number>;
  for (const g of groups) counts[g.status] = g._count._all;
  return counts;
}
