import { describe, expect, it } from "vitest";
import { z } from "zod";
import { appRouter } from "@/server/trpc/root";

// What reaches the browser is declared: every procedure of the app router has an `.output()`
// schema, so a new procedure without one fails here, and no schema lets an undeclared key
// through (a loose object or a record of anything would pass a secret added by mistake along).
// outputs.int.test.ts shows the schemas strip such a key from real answers.

// Where an answer carries open JSON on purpose, each with why. A path here is reported by
// `openings` below (a schema shared by several places, at the first); nothing else may be open.
const OPEN_BY_DESIGN: Record<string, string> = {
  // An audit entry's detail is what each action chose to record (a reason, what changed from
  // what to what); the page words it (components/audit/sentence.ts), there is no one schema.
  "audit.list.items[].detail|5 (record)": "each action's own detail",
  // What an agent passed to a tool (a tool call, a refused one): the agent's own JSON, which the
  // event catalogue bounds but does not shape, shown to the reader as it is.
  "runs.events[]|1.payload.input (unknown)": "a tool call's input",
  "runs.events[]|4.payload.input (unknown)": "a refused tool call's input",
  // Keyed by a policy's own property names (zPolicyName), each value a scalar or a strict fact:
  // a decision's facts (zPolicyDecision) and a checked region's example assignment.
  ...Object.fromEntries(
    [
      "policies.list[].review.checks.conflicts[].region.example",
      "policies.byKind.review.checks.conflicts[].region.example",
      "policies.check.checks.conflicts[].region.example",
      "policies.tryIt.decisions[].facts",
      "policies.save.review.checks.conflicts[].region.example",
      "proofs.byRun[].decision.facts",
      "proofs.byId.decision.facts",
      "proofs.recheck.current.facts",
    ].map((path) => [`${path} (record)`, "property name -> fact or value"]),
  ),
};

type ProcedureDef = { _def: { output?: z.ZodType; type: string } };
const procedures = Object.entries(appRouter._def.procedures as unknown as Record<string, ProcedureDef>);
const declared = procedures.filter(([, p]) => p._def.output);

/** Paths inside `schema` where an object accepts keys it does not name. */
function openings(schema: z.ZodType, at = "$", seen = new Set<z.ZodType>()): string[] {
  if (seen.has(schema)) return [];
  seen.add(schema);
  const def = schema._zod.def as unknown as Record<string, unknown> & { type: string };
  const child = (s: unknown, path: string) => (s instanceof z.ZodType ? openings(s, path, seen) : []);
  switch (def.type) {
    case "object": {
      const catchall = def.catchall as z.ZodType | undefined;
      const open = catchall !== undefined && catchall._zod.def.type !== "never" ? [`${at} (loose)`] : [];
      return [...open, ...Object.entries(def.shape as Record<string, z.ZodType>).flatMap(([k, s]) => child(s, `${at}.${k}`))];
    }
    case "record": {
      // A record keyed by an enum names its keys (z.partialRecord(z.enum(...), ...)).
      const keys = (def.keyType as z.ZodType)._zod.def.type;
      return keys === "enum" ? child(def.valueType, `${at}{}`) : [`${at} (record)`];
    }
    case "lazy":
      // A recursive schema (a proof tree, JSON): its cached inner schema, once.
      return child((schema as z.ZodLazy)._zod.innerType, at);
    case "any":
    case "unknown":
      return [`${at} (${def.type})`];
    case "array":
      return child(def.element, `${at}[]`);
    case "union":
      return (def.options as z.ZodType[]).flatMap((s, i) => child(s, `${at}|${i}`));
    case "intersection":
      return [...child(def.left, at), ...child(def.right, at)];
    case "pipe":
      // What is sent is the pipe's output (storedJson: any JSON in, its schema out).
      return child(def.out, at);
    default:
      return "innerType" in def ? child(def.innerType, at) : [];
  }
}

describe("declared outputs", () => {
  it("every procedure declares an output schema", () => {
    const missing = procedures.filter(([, p]) => !p._def.output).map(([path]) => path);
    expect(missing).toEqual([]);
  });

  it("no output schema lets an undeclared key through, but where it is open by design", () => {
    expect(declared.flatMap(([path, p]) => (p._def.output ? openings(p._def.output, path) : [])).sort()).toEqual(Object.keys(OPEN_BY_DESIGN).sort());
  });

  it("finds a loose object or a record where there is one (the check itself)", () => {
    expect(openings(z.object({ a: z.array(z.looseObject({ b: z.string() })) }))).toEqual(["$.a[] (loose)"]);
    expect(openings(z.object({ a: z.record(z.string(), z.string()).nullable() }))).toEqual(["$.a (record)"]);
    expect(openings(z.strictObject({ a: z.string() }))).toEqual([]);
    expect(openings(z.object({ a: z.unknown().pipe(z.object({ b: z.string() })) }))).toEqual([]);
    expect(openings(z.object({ a: z.partialRecord(z.enum(["x", "y"]), z.looseObject({})) }))).toEqual(["$.a{} (loose)"]);
    expect(openings(z.object({ a: z.json() }))).toEqual(["$.a|5 (record)"]);
  });
});
