import { z } from "zod";
import { appRouter } from "@/server/trpc/root";

// The zod schemas the routers validate with, read off the procedures themselves, so the REST
// layer and its OpenAPI document can never drift from them.

type ProcedureDef = { _def: { inputs: unknown[]; output?: unknown; type: "query" | "mutation" | "subscription" } };

function procedureDef(path: string): ProcedureDef["_def"] {
  // tRPC types `procedures` as the nested router; at run time it is the flat map by dotted path.
  const procedures: object = appRouter._def.procedures;
  const proc = (procedures as Record<string, ProcedureDef | undefined>)[path];
  if (!proc) throw new Error(`No procedure ${path} in the app router`);
  return proc._def;
}

/** A procedure's input as one object schema (its middleware inputs and its own, merged as tRPC merges them). */
export function procedureInput(path: string, without: readonly string[] = []): z.ZodObject {
  const inputs = procedureDef(path).inputs;
  let shape: z.ZodRawShape = {};
  for (const input of inputs) {
    if (!(input instanceof z.ZodObject)) throw new Error(`${path}: a REST route needs object inputs`);
    shape = { ...shape, ...input.shape };
  }
  return z.object(Object.fromEntries(Object.entries(shape).filter(([name]) => !without.includes(name))));
}

/** The procedure's declared output schema, if it has one. */
export function procedureOutput(path: string): z.ZodType | null {
  const output = procedureDef(path).output;
  return output instanceof z.ZodType ? output : null;
}

export const procedureKind = (path: string) => procedureDef(path).type;

export const jsonSchemaOf = (schema: z.ZodType, io: "input" | "output") =>
  z.toJSONSchema(schema, { target: "draft-2020-12", io, unrepresentable: "any" }) as Record<string, unknown>;

/** Query-string values as the schema's types ("25" is 25 for a number field). */
export function coerceQuery(schema: z.ZodObject, query: URLSearchParams): Record<string, unknown> {
  const props = (jsonSchemaOf(schema, "input").properties ?? {}) as Record<string, { type?: string | string[]; anyOf?: { type?: string }[] }>;
  const out: Record<string, unknown> = {};
  for (const [key, value] of query) {
    const prop = props[key];
    const types = new Set([prop?.type ?? [], ...(prop?.anyOf ?? []).map((a) => a.type ?? [])].flat());
    if ((types.has("integer") || types.has("number")) && /^-?\d+(\.\d+)?$/.test(value)) out[key] = Number(value);
    else if (types.has("boolean") && (value === "true" || value === "false")) out[key] = value === "true";
    else out[key] = value;
  }
  return out;
}
