// The stack forms' schemas: the stacks procedures validate with these, and the forms use the very
// same ones through zodResolver. zStackSpec (spec-schema.ts) stays the definition of a stack;
// saving one also requires a prompt template that renders (checkPromptTemplate) and unique names.
// Nothing here needs Node: the stack editor runs it in the browser.
import { z } from "zod";
import { checkPromptTemplate } from "@/server/domain/context/schemas";
import { zTaskKind } from "@/server/domain/ci-events/schemas";
import { zId } from "@/server/lib/ids";
import { zStackSpec, type StackSpec } from "./spec-schema";

export type { StackSpec } from "./spec-schema";

export const zStackName = z
  .string()
  .trim()
  .min(1, "Required")
  .max(80, "At most 80 characters")
  .regex(/^[a-z0-9][a-z0-9._-]*$/, "Lowercase letters, digits, dot, dash and underscore");

function duplicates(names: readonly string[]): string[] {
  const seen = new Set<string>();
  const dup = new Set<string>();
  for (const n of names) (seen.has(n) ? dup : seen).add(n);
  return [...dup];
}

/** A spec a person may save: zStackSpec, plus a template that renders and unique names. */
export const zStackFormSpec = zStackSpec.superRefine((spec, ctx) => {
  const check = checkPromptTemplate(spec.promptTemplate);
  if (check.unknown.length > 0) {
    ctx.addIssue({
      code: "custom",
      path: ["promptTemplate"],
      message: `Unknown variables: ${check.unknown.map((n) => `{{${n}}}`).join(", ")}. Pick from the list of variables.`,
    });
  }
  if (check.malformed.length > 0) {
    ctx.addIssue({
      code: "custom",
      path: ["promptTemplate"],
      message: `Malformed placeholders: ${check.malformed.map((m) => JSON.stringify(m)).join(", ")}`,
    });
  }
  spec.mcpServers.forEach((server, i) => {
    if (server.transport !== "stdio" && !/^https?:\/\/\S+$/.test(server.target)) {
      ctx.addIssue({ code: "custom", path: ["mcpServers", i, "target"], message: "An http or sse server needs an http(s) URL" });
    }
  });
  for (const name of duplicates(spec.mcpServers.map((s) => s.name))) {
    const i = spec.mcpServers.findLastIndex((s) => s.name === name);
    ctx.addIssue({ code: "custom", path: ["mcpServers", i, "name"], message: `Another MCP server is called ${name}` });
  }
  for (const name of duplicates(spec.subagents.map((s) => s.name))) {
    const i = spec.subagents.findLastIndex((s) => s.name === name);
    ctx.addIssue({ code: "custom", path: ["subagents", i, "name"], message: `Another subagent is called ${name}` });
  }
});

export const zStackInput = z.object({
  name: zStackName,
  description: z.string().trim().max(500, "At most 500 characters").default(""),
  spec: zStackFormSpec,
});
/** What the form holds (defaults not yet applied). */
export type StackFormValues = z.input<typeof zStackInput>;
export type StackInput = z.output<typeof zStackInput>;

export const zCreateStackInput = zStackInput.extend({
  /** Set when the form started as a clone; recorded in the audit entry. */
  clonedFromId: zId.optional(),
});

export const zUpdateStackInput = zStackInput.extend({
  stackId: zId,
  /** The version the form was loaded at: a save over a newer version is refused. */
  expectedVersion: z.int().positive(),
});

export const zStackIdInput = z.object({ stackId: zId });

export const zStackDiffInput = z.object({
  stackId: zId,
  from: z.int().positive(),
  to: z.int().positive(),
});

/** Preview sources: a recent failure of the repository, as a stored delivery or a failed job. */
export const zPreviewSource = z.discriminatedUnion("kind", [
  z.object({ kind: z.literal("delivery"), deliveryId: zId }),
  z.object({ kind: z.literal("job"), jobId: zId }),
]);
export type PreviewSource = z.infer<typeof zPreviewSource>;

export const zStackPreviewInput = z.object({
  repositoryId: zId,
  /** The stack being edited; null for a new one. */
  stackId: zId.nullable(),
  name: zStackName,
  spec: zStackFormSpec,
  source: zPreviewSource,
  /** Used when no rule of this stack matches the failure (a hypothetical rule then starts it). */
  taskKind: zTaskKind,
});

/** A blank stack for the create form. */
export function emptyStackSpec(): StackSpec {
  return {
    modelProvider: "anthropic",
    model: "",
    adapter: { kind: "command", command: [""], env: [], outputFormat: "auto" },
    tools: [],
    mcpServers: [],
    skills: [],
    subagents: [],
    approvalMode: "always",
    promptTemplate:
      "Diagnose the failed check {{pipeline.checkName}} of {{repository.fullName}} at {{ref.commitSha}}.\n\n{{logs.excerpt}}\n\n{{task.outputFormat}}",
    limits: { wallClockMinutes: 30, maxCostUsd: 5, maxRetries: 2 },
  };
}

export const MODEL_PROVIDERS = zStackSpec.shape.modelProvider.options;
export const MCP_TRANSPORTS = ["stdio", "http", "sse"] as const;
export const APPROVAL_MODE_LABELS: Record<StackSpec["approvalMode"], string> = {
  always: "Every write-back waits for a person",
  exceptions_allowed: "Write-backs a repository admin exempted may proceed",
};
