import { z } from "zod";
import type { Db } from "@/server/db";
import { AppError } from "@/server/errors";

// Optimistic concurrency for configuration rows with a `version` column (trigger rules, runner
// pools, service accounts, grants, repository settings). A save names the version its form was
// loaded at; a newer version refuses it (CONFLICT) with what changed since: read back from the
// audit entries, which record every change as field, before and after.

/** One changed field; the same shape as a stack spec change, so one panel shows both. */
export type FieldChange = { path: string; kind: "changed"; before: string | null; after: string | null };

export function showValue(value: unknown): string | null {
  if (value === null || value === undefined) return null;
  if (Array.isArray(value)) return value.length === 0 ? "(none)" : value.map(String).join(", ");
  if (typeof value === "boolean") return value ? "yes" : "no";
  return String(value);
}

export function changedFields<T extends Record<string, unknown>>(before: T, after: T, fields: readonly (keyof T & string)[]): FieldChange[] {
  return fields.flatMap((path) => {
    const b = showValue(before[path]);
    const a = showValue(after[path]);
    return b === a ? [] : [{ path, kind: "changed" as const, before: b, after: a }];
  });
}

const zAuditChanges = z.object({
  toVersion: z.number().int(),
  changes: z.array(z.object({ path: z.string(), before: z.string().nullable(), after: z.string().nullable() })),
});

/** Changes recorded for an object after `version`, merged per field (first before, last after). */
export async function changesSince(db: Db, objectType: string, objectId: string, version: number) {
  const entries = await db.auditEntry.findMany({
    where: { objectType, objectId },
    orderBy: [{ createdAt: "asc" }, { id: "asc" }],
    select: { actor: true, createdAt: true, detail: true },
  });
  const merged = new Map<string, FieldChange>();
  let savedBy: string | null = null;
  let savedAt: string | null = null;
  for (const entry of entries) {
    const parsed = zAuditChanges.safeParse(entry.detail);
    if (!parsed.success || parsed.data.toVersion <= version) continue;
    savedBy = entry.actor;
    savedAt = entry.createdAt.toISOString();
    for (const c of parsed.data.changes) {
      const prior = merged.get(c.path);
      merged.set(c.path, { path: c.path, kind: "changed", before: prior ? prior.before : c.before, after: c.after });
    }
  }
  const changes = [...merged.values()].filter((c) => c.before !== c.after);
  return { changes, savedBy, savedAt };
}

export type StaleDetails = {
  expectedVersion: number;
  currentVersion: number;
  savedBy: string | null;
  savedAt: string | null;
  theirChange: { changes: FieldChange[] };
  current: Record<string, unknown>;
};

/** The CONFLICT a save over a newer version gets; nothing was written. */
export async function staleVersionError(opts: {
  db: Db;
  objectType: string;
  objectId: string;
  what: string;
  expectedVersion: number;
  currentVersion: number;
  current: Record<string, unknown>;
}): Promise<AppError> {
  const since = await changesSince(opts.db, opts.objectType, opts.objectId, opts.expectedVersion);
  const details: StaleDetails = {
    expectedVersion: opts.expectedVersion,
    currentVersion: opts.currentVersion,
    savedBy: since.savedBy,
    savedAt: since.savedAt,
    theirChange: { changes: since.changes },
    current: opts.current,
  };
  return new AppError(
    "CONFLICT",
    `${opts.what} was changed by ${since.savedBy ?? "someone else"} (now version ${opts.currentVersion}) since you opened version ` +
      `${opts.expectedVersion}. Your changes were not saved; review their change below.`,
    { reason: "stale_version", details },
  );
}

const LOCKABLE = ["Repository", "TriggerRule", "RunnerPool", "ServiceAccount", "SecretGrant", "ConfigGrant"] as const;

/** Locks rows of a configuration table for the rest of the transaction (saves serialise on them). */
export async function lockRows(db: Db, table: (typeof LOCKABLE)[number], ids: readonly string[]): Promise<void> {
  if (!LOCKABLE.includes(table)) throw new Error(`not a lockable table: ${table}`);
  if (ids.length === 0) return;
  await db.$queryRawUnsafe(`SELECT "id" FROM "${table}" WHERE "id" = ANY($1::text[]) ORDER BY "id" FOR UPDATE`, [...ids]);
}
