import { z } from "zod";

/**
 * A JSON column the server wrote, parsed with its own schema on the way out: Prisma types it
 * as any JSON, so the answer takes the schema's type, and a stored record of another shape
 * fails the procedure (logged, an error on the page) rather than reaching the page unchecked.
 */
export const storedJson = <T extends z.ZodType>(schema: T) => z.unknown().pipe(schema);

/**
 * A column of a Prisma enum that a presenter or a raw query types as text, checked against the
 * enum on the way out (so the page gets the enum's type, and another value fails the procedure).
 */
export const storedEnum = <const T extends Record<string, string>>(values: T) => z.string().pipe(z.enum(values));
