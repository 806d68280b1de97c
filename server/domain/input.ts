import type { z } from "zod";
import { AppError } from "@/server/errors";

// Domain functions validate their input again (they are called from routes, jobs and tests), and
// a failure is an UNPROCESSABLE AppError whose `details.fieldErrors` maps dotted field paths
// ("spec.adapter.command.0") to messages: the forms put each message on its field.

export type FieldErrors = Record<string, string[]>;

export function fieldErrorsOf(issues: readonly z.core.$ZodIssue[]): FieldErrors {
  const out: FieldErrors = {};
  for (const issue of issues) {
    const path = issue.path.map(String).join(".") || "_form";
    (out[path] ??= []).push(issue.message);
  }
  return out;
}

export function parseInput<S extends z.ZodType>(schema: S, value: unknown): z.output<S> {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  const fieldErrors = fieldErrorsOf(parsed.error.issues);
  const first = Object.entries(fieldErrors)[0];
  throw new AppError("UNPROCESSABLE", first ? `${first[0]}: ${first[1].join(" ")}` : "Invalid input", {
    reason: "invalid_input",
    details: { fieldErrors },
  });
}

/** A refusal that belongs to one field (a taken name, a forbidden combination). */
export function fieldError(
  code: "CONFLICT" | "UNPROCESSABLE" | "FORBIDDEN",
  field: string,
  message: string,
  reason: string,
  details: Record<string, unknown> = {},
): AppError {
  return new AppError(code, message, { reason, details: { ...details, fieldErrors: { [field]: [message] } } });
}

/** Prisma's unique-constraint error, without importing the runtime. */
export const isUniqueViolation = (err: unknown) =>
  typeof err === "object" && err !== null && "code" in err && (err as { code: unknown }).code === "P2002";
