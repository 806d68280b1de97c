import type { Db, Prisma } from "@/server/db";
import { AppError } from "@/server/errors";
import { stackSnapshot, zStackSpec, type StackSpec } from "./spec";

// A stack as a person's action puts it on a run (fork onto another stack, a suggestion
// dispatched as another task, a manual dispatch): its current version, validated, snapshotted
// with its digest. Refused with a reason when the stack is missing, archived or invalid.

export type CurrentStack = {
  id: string;
  name: string;
  version: number;
  spec: StackSpec;
  snapshot: Prisma.JsonValue;
  digest: string;
};

export async function currentStackVersion(db: Db, stackId: string): Promise<CurrentStack> {
  const row = await db.agentStack.findUnique({
    where: { id: stackId },
    select: { id: true, name: true, archivedAt: true, versions: { orderBy: { version: "desc" }, take: 1 } },
  });
  const version = row?.versions[0];
  if (!row || !version) throw new AppError("NOT_FOUND", "No such stack.", { reason: "no_such_stack" });
  if (row.archivedAt) throw new AppError("CONFLICT", `Stack ${row.name} is archived.`, { reason: "stack_archived" });
  const spec = zStackSpec.safeParse(version.spec);
  if (!spec.success) throw new AppError("UNPROCESSABLE", `Stack ${row.name} v${version.version} is not a valid stack definition.`, { reason: "invalid_stack" });
  const snap = stackSnapshot({ id: row.id, name: row.name, version: version.version, spec: spec.data });
  return { id: row.id, name: row.name, version: version.version, spec: spec.data, snapshot: snap.snapshot as Prisma.JsonValue, digest: snap.digest };
}
