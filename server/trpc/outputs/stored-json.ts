import { z } from "zod";

/**
 * A JSON column the server wrote, parsed with its own schema on the way out: Prisma types it
 * as any JSON, so the answer takes the schema's type, and a stored record of another shape
 * fails the procedure (logged, an error on the page) rather than reaching the page unchecked.
 */
export const storedJson = <T extends z.ZodType>(schema: T) => z.unknown().pipe(schema);
