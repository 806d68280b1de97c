import { z } from "zod";
import { RunStatus } from "@/server/db/generated/enums";

// What runs.dispatchManual returns: the run the request made (the dialog opens it).
export const zManualDispatched = z.object({
  runId: z.string(),
  number: z.number().int(),
  status: z.enum(RunStatus),
  /** True when this request id had already made the run (a double submit). */
  repeated: z.boolean(),
});
