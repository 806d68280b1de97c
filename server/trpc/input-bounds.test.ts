import { describe, expect, it } from "vitest";
import { z } from "zod";
import { appRouter } from "./root";

// Every string, array and record of every procedure's input has an upper bound, so no input can
// make the server hold, validate or store without limit (a 3 MB argv, 200,000 tools, 10,000
// rules). A new procedure that forgets one fails here, with its path.

type JsonSchema = { [key: string]: unknown };
const procedures = (appRouter._def as unknown as { procedures: Record<string, { _def: { inputs: z.ZodType[] } }> }).procedures;

/** Where an input schema is unbounded: "<path>: a string with no maximum length". */
function unbounded(schema: z.ZodType): string[] {
  const json = z.toJSONSchema(schema, {
    io: "input",
    unrepresentable: "any",
    // Dates travel as superjson dates: bounded by parsing. Everything else must say its bound.
    override: (ctx) => {
      if (ctx.zodSchema._zod.def.type === "date") Object.assign(ctx.jsonSchema, { type: "string", format: "date-time", maxLength: 40 });
    },
  }) as JsonSchema;
  const found: string[] = [];
  const visit = (node: unknown, at: string) => {
    if (!node || typeof node !== "object") return;
    const n = node as JsonSchema;
    const keys = Object.keys(n).filter((k) => k !== "$schema" && k !== "description" && k !== "default");
    if (keys.length === 0) found.push(`${at || "(input)"}: any value, unbounded`);
    if (n.type === "string" && n.maxLength === undefined && n.enum === undefined && n.const === undefined && n.format !== "uuid") found.push(`${at}: a string with no maximum length`);
    if (n.type === "array" && n.maxItems === undefined) found.push(`${at}: an array with no maximum length`);
    if (n.type === "object" && n.additionalProperties && typeof n.additionalProperties === "object" && n.maxProperties === undefined) found.push(`${at}: a record with no maximum size`);
    for (const [k, v] of Object.entries(n)) {
      if (k === "properties") for (const [name, child] of Object.entries(v as JsonSchema)) visit(child, `${at}.${name}`);
      else if (k === "items" || k === "additionalProperties" || k === "propertyNames") visit(v, `${at}[]`);
      else if (k === "prefixItems" || k === "anyOf" || k === "oneOf" || k === "allOf") (v as unknown[]).forEach((child) => visit(child, at));
      else if (k === "$defs") for (const [name, child] of Object.entries(v as JsonSchema)) visit(child, `#${name}`);
    }
  };
  visit(json, "");
  return found;
}

describe("tRPC input bounds", () => {
  it("finds an unbounded string, array or record (the check itself)", () => {
    expect(unbounded(z.object({ a: z.string(), b: z.array(z.string().max(3)), c: z.record(z.string().max(1), z.number()), d: z.unknown() }))).toEqual([
      ".a: a string with no maximum length",
      ".b: an array with no maximum length",
      ".c: a record with no maximum size",
      ".d: any value, unbounded",
    ]);
    expect(unbounded(z.object({ a: z.string().max(3), b: z.array(z.enum(["x"])).max(2), c: z.uuid(), d: z.date(), e: z.number() }))).toEqual([]);
  });

  it("every procedure bounds every string, array and record of its input", () => {
    const problems = Object.entries(procedures).flatMap(([path, p]) => p._def.inputs.flatMap((input) => unbounded(input).map((where) => `${path} ${where}`)));
    expect(problems).toEqual([]);
    expect(Object.keys(procedures).length).toBeGreaterThan(50);
  });
});
