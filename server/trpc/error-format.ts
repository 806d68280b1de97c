import type { TRPCDefaultErrorShape, TRPCError } from "@trpc/server";
import { ZodError } from "zod";
import { fieldErrorsOf, type FieldErrors } from "@/server/domain/input";
import { AppError } from "@/server/errors";

// What a refused call answers. Each zod issue is sent once (as a field error keyed by its dotted
// path, "spec.mcpServers.2.target"; the message only names the first), and the whole error is
// bounded: a hostile input with thousands of problems gets the first of them, counted, in a few
// kilobytes, never an echo of itself.

const MAX_FIELDS = 50;
const MAX_MESSAGES_PER_FIELD = 3;
const MAX_TEXT = 500;
const MAX_MESSAGE = 2_000;
/** The error's JSON past this loses its details (the message and the first field errors stay). */
const MAX_ERROR_BYTES = 32 * 1024;

const clip = (text: string, max: number) => (text.length > max ? `${text.slice(0, max)}…` : text);

/** Field errors, each message once, bounded in fields, messages and length. */
export function boundedFieldErrors(fieldErrors: FieldErrors): { fieldErrors: FieldErrors; omitted: number } {
  const out: FieldErrors = {};
  let omitted = 0;
  for (const [path, messages] of Object.entries(fieldErrors)) {
    const unique = [...new Set(messages)];
    if (Object.keys(out).length >= MAX_FIELDS) {
      omitted += unique.length;
      continue;
    }
    out[clip(path, 200)] = unique.slice(0, MAX_MESSAGES_PER_FIELD).map((m) => clip(m, MAX_TEXT));
    omitted += Math.max(0, unique.length - MAX_MESSAGES_PER_FIELD);
  }
  return { fieldErrors: out, omitted };
}

function zodSummary(error: ZodError): { message: string; fieldErrors: FieldErrors; omitted: number; issues: number } {
  const { fieldErrors, omitted } = boundedFieldErrors(fieldErrorsOf(error.issues));
  const [path, messages] = Object.entries(fieldErrors)[0] ?? ["_form", ["Invalid input"]];
  const more = error.issues.length - 1;
  const where = path === "_form" ? "" : `${path}: `;
  return { message: `Invalid input: ${where}${messages[0]}${more > 0 ? ` (and ${more} more problem${more === 1 ? "" : "s"})` : ""}`, fieldErrors, omitted, issues: error.issues.length };
}

function boundedDetails(details: Record<string, unknown> | null): Record<string, unknown> | null {
  if (!details) return null;
  const fe = details.fieldErrors;
  const withFields = fe && typeof fe === "object" ? { ...details, fieldErrors: boundedFieldErrors(fe as FieldErrors).fieldErrors } : details;
  return JSON.stringify(withFields).length > MAX_ERROR_BYTES / 2 ? { truncated: true } : withFields;
}

export function formatError({ shape, error }: { shape: TRPCDefaultErrorShape; error: TRPCError }) {
  const cause = error.cause;
  const internal = error.code === "INTERNAL_SERVER_ERROR" && !(cause instanceof AppError);
  const zod = cause instanceof ZodError ? zodSummary(cause) : null;
  const formatted = {
    ...shape,
    // 5xx text can carry SQL or paths: never show it. A zod failure's own message is every issue
    // as JSON, the same ones fieldErrors carries: say the first, count the rest.
    message: internal ? "Something went wrong on our side; it has been logged." : clip(zod?.message ?? shape.message, MAX_MESSAGE),
    data: {
      ...shape.data,
      stack: undefined,
      reason: cause instanceof AppError ? (cause.reason ?? null) : null,
      details: cause instanceof AppError ? boundedDetails(cause.details ?? null) : null,
      // zod failures become messages per dotted field path, so a nested error lands on its own
      // input, not on the top-level field.
      fieldErrors: zod?.fieldErrors ?? null,
      ...(zod ? { issueCount: zod.issues, omittedIssues: zod.omitted } : {}),
    },
  };
  if (JSON.stringify(formatted).length <= MAX_ERROR_BYTES) return formatted;
  return { ...formatted, data: { ...formatted.data, details: { truncated: true }, fieldErrors: zod ? Object.fromEntries(Object.entries(zod.fieldErrors).slice(0, 5)) : null } };
}
