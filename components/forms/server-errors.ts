import type { FieldValues, Path, UseFormReturn } from "react-hook-form";

// A refused save, mapped onto the form: zod's per-field messages from the tRPC error formatter
// (`data.fieldErrors`, top-level fields) and the domain's dotted paths (`data.details.fieldErrors`,
// e.g. "spec.adapter.command.0") land on their fields with setError; what matches no field, and
// the message itself, stays for the form's banner. A stale version is returned as a conflict.

export type FieldChange = { path: string; kind: "added" | "removed" | "changed"; before: string | null; after: string | null };

export type Conflict = {
  message: string;
  expectedVersion: number;
  currentVersion: number;
  savedBy: string | null;
  savedAt: string | null;
  changes: FieldChange[];
  /** The prompt template line diff, for stacks. */
  lines: { op: "same" | "added" | "removed"; text: string }[] | null;
  current: Record<string, unknown>;
};

type ErrorData = {
  code?: string;
  reason?: string | null;
  fieldErrors?: Record<string, string[] | undefined> | null;
  details?: Record<string, unknown> | null;
} | null;

export type ServerError = { message: string; data?: ErrorData | undefined };

function isLeaf(value: unknown) {
  return value === null || typeof value !== "object" || (Array.isArray(value) && value.every((v) => v === null || typeof v !== "object"));
}

export function conflictOf(error: ServerError): Conflict | null {
  const details = error.data?.details;
  if (error.data?.code !== "CONFLICT" || error.data.reason !== "stale_version" || !details) return null;
  const their = (details.theirChange ?? null) as { changes?: FieldChange[]; promptTemplate?: Conflict["lines"] } | null;
  return {
    message: error.message,
    expectedVersion: Number(details.expectedVersion),
    currentVersion: Number(details.currentVersion),
    savedBy: (details.savedBy as string | null) ?? null,
    savedAt: (details.savedAt as string | null) ?? null,
    changes: their?.changes ?? [],
    lines: their?.promptTemplate ?? null,
    current: (details.current as Record<string, unknown>) ?? {},
  };
}

/** Puts the server's field messages on their fields; returns what no field could show. */
export function applyServerErrors<T extends FieldValues>(form: Pick<UseFormReturn<T>, "setError" | "getValues">, error: ServerError): string[] {
  const loose: string[] = [];
  const fromDetails = (error.data?.details?.fieldErrors ?? null) as Record<string, string[]> | null;
  const all = { ...(error.data?.fieldErrors ?? {}), ...(fromDetails ?? {}) };
  let placed = 0;
  for (const [path, messages] of Object.entries(all)) {
    if (!messages || messages.length === 0) continue;
    const text = messages.join(" ");
    const value = path === "_form" ? undefined : (form.getValues(path as Path<T>) as unknown);
    if (path !== "_form" && value !== undefined && isLeaf(value)) {
      form.setError(path as Path<T>, { type: "server", message: text }, { shouldFocus: placed === 0 });
      placed++;
    } else loose.push(path === "_form" ? text : `${path}: ${text}`);
  }
  return loose;
}
