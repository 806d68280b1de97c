import { z } from "zod";

// The id of a stored row (cuid, uuid or a seeded id) as an input names it: bounded, like every
// input string (an id longer than this names nothing). No Node imports: forms use it too.
export const zId = z.string().min(1).max(100);
