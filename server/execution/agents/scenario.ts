import { z } from "zod";
import {
  zCostEvent,
  zHeartbeatEvent,
  zLogEvent,
  zMessageEvent,
  zSubagentCompletedEvent,
  zSubagentStartedEvent,
  zToolCallPayload,
  zToolResultEvent,
} from "@/server/domain/events/catalogue";

// A recorded scenario for the scripted adapter: timed steps, each one agent
// event, and the artifacts the agent wrote. `{{workspaceDir}}` and
// `{{artifactsDir}}` in any string are replaced at replay, so paths in tool
// output match the attempt. Tool calls get their start time at replay too.

export const zScenarioEvent = z.discriminatedUnion("type", [
  zMessageEvent,
  z.object({ type: z.literal("tool_call"), payload: zToolCallPayload.extend({ startedAt: z.string().optional() }) }),
  zToolResultEvent,
  zSubagentStartedEvent,
  zSubagentCompletedEvent,
  zHeartbeatEvent,
  zCostEvent,
  zLogEvent,
]);

const zRelativePath = z
  .string()
  .min(1)
  .max(200)
  .refine((p) => !p.startsWith("/") && !p.split("/").some((part) => part === ".." || part === ""), {
    message: "A relative path inside the artifacts folder",
  });

export const zScenario = z
  .object({
    name: z.string().regex(/^[a-z0-9][a-z0-9-]*$/),
    title: z.string().min(1).max(200),
    description: z.string().max(2000).default(""),
    /** The repository state the scenario was recorded against (the demo seeds it). */
    assumes: z
      .object({
        repository: z.string(),
        checkCommand: z.string().optional(),
        failingTest: z.string().optional(),
        files: z.record(z.string(), z.string()),
      })
      .optional(),
    steps: z
      .array(z.object({ delayMs: z.number().int().min(0).max(600_000), event: zScenarioEvent }))
      .min(1)
      .max(10_000),
    /** Written to the artifacts folder right after step `afterStep` (0-based). */
    artifacts: z
      .array(z.object({ afterStep: z.number().int().min(0), name: zRelativePath, content: z.string() }))
      .default([]),
    exit: z
      .object({ status: z.enum(["succeeded", "failed"]), exitCode: z.number().int(), reason: z.string().min(1) })
      .default({ status: "succeeded", exitCode: 0, reason: "the scenario completed" }),
  })
  .superRefine((s, ctx) => {
    s.artifacts.forEach((a, i) => {
      if (a.afterStep >= s.steps.length) {
        ctx.addIssue({ code: "custom", path: ["artifacts", i, "afterStep"], message: `No step ${a.afterStep}` });
      }
    });
    const names = s.artifacts.map((a) => a.name);
    if (new Set(names).size !== names.length) {
      ctx.addIssue({ code: "custom", path: ["artifacts"], message: "Artifact names must be unique" });
    }
  });

export type Scenario = z.infer<typeof zScenario>;

function explain(error: z.ZodError): string {
  return error.issues
    .slice(0, 5)
    .map((i) => `${i.path.join(".") || "(root)"}: ${i.message}`)
    .join("; ");
}

/** Validates a scenario, throwing an Error that names the first problems. */
export function parseScenario(value: unknown, source = "scenario"): Scenario {
  const parsed = zScenario.safeParse(value);
  if (!parsed.success) throw new Error(`Invalid ${source}: ${explain(parsed.error)}`);
  return parsed.data;
}

/** Replaces {{name}} placeholders in every string of a JSON value. */
export function fillPlaceholders<T>(value: T, vars: Record<string, string>): T {
  const fill = (v: unknown): unknown => {
    if (typeof v === "string") return v.replace(/\{\{(\w+)\}\}/g, (m, k: string) => vars[k] ?? m);
    if (Array.isArray(v)) return v.map(fill);
    if (v && typeof v === "object") return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, fill(x)]));
    return v;
  };
  return fill(value) as T;
}
