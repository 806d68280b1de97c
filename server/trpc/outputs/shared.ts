import { z } from "zod";
import { RunStatus } from "@/server/db/generated/enums";

// Shapes more than one router sends: a right with its reason, a run named by its number.

/** Whether the reader may do something, and if not, the sentence that says why. */
export const zRight = z.discriminatedUnion("allowed", [z.object({ allowed: z.literal(true), reason: z.null() }), z.object({ allowed: z.literal(false), reason: z.string() })]);

export const zRunRef = z.object({ id: z.string(), number: z.number().int(), title: z.string(), status: z.enum(RunStatus) });

export const zDeleted = z.object({ id: z.string() });

export const zUpdated = z.object({ marked: z.number().int() });

/** A keyset page (the lists that load more): its items, and the cursor of the next page, if any. */
export const zPage = <T extends z.ZodType>(item: T) => z.object({ items: z.array(item), nextCursor: z.string().nullable() });
