// One readable form for zod issues: "repository.full_name: Required".
import type { z } from "zod";

export type Issue = { path: string; message: string };

export function formatIssues(issues: ReadonlyArray<z.core.$ZodIssue>): Issue[] {
  return issues.map((i) => ({
    path: i.path.length === 0 ? "(root)" : i.path.map((seg) => String(seg)).join("."),
    message: i.message,
  }));
}

export function issuesToText(issues: readonly Issue[]): string {
  return issues.map((i) => `${i.path}: ${i.message}`).join("; ");
}

/** zod's default for a missing field is "Invalid input: expected string, received undefined". */
export const requiredMessage = (iss: z.core.$ZodRawIssue) =>
  iss.code === "invalid_type" && iss.input === undefined ? "Required" : undefined;
