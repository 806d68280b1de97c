import { describe, expect, it } from "vitest";
import { z } from "zod";
import { appRouter } from "@/server/trpc/root";

// What reaches the browser is declared: every procedure of the routers whose answers carry the
// most sensitive data has an `.output()` schema, and no schema in it lets an undeclared key
// through (a loose object or a record of anything would pass a secret added by mistake along).
// outputs.int.test.ts shows the schemas strip such a key from real answers.

const DECLARED = ["apiTokens.", "users.", "invitation.", "githubApp.", "pools."];
// Of the approvals router, all but byId (its presented JSON changes shape with #19's write-back
// kinds) and retryWriteBack (the write-backs area, being changed in another branch).
const DECLARED_PATHS = ["approvals.list", "approvals.counts", "approvals.approve", "approvals.reject", "approvals.overridePushProtection"];
// The stacks pages' reads (the writes and previews come next).
DECLARED_PATHS.push("stacks.list", "stacks.byId", "stacks.options", "stacks.versionSpec", "stacks.diff");

type ProcedureDef = { _def: { output?: z.ZodType; type: string } };
const procedures = Object.entries(appRouter._def.procedures as unknown as Record<string, ProcedureDef>);
const declared = procedures.filter(([path]) => DECLARED.some((prefix) => path.startsWith(prefix)) || DECLARED_PATHS.includes(path));

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
    case "record":
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
      return [...child(def.in, at), ...child(def.out, at)];
    default:
      return "innerType" in def ? child(def.innerType, at) : [];
  }
}

describe("declared outputs", () => {
  it("covers the routers it names", () => {
    expect(declared.map(([path]) => path)).toEqual(expect.arrayContaining(["apiTokens.list", "apiTokens.create", "users.list", "invitation.lookup", "githubApp.get", "pools.settings", ...DECLARED_PATHS]));
  });

  it("every procedure of those routers declares an output schema", () => {
    expect(declared.filter(([, p]) => !p._def.output).map(([path]) => path)).toEqual([]);
  });

  it("no output schema lets an undeclared key through", () => {
    expect(declared.flatMap(([path, p]) => (p._def.output ? openings(p._def.output, path) : []))).toEqual([]);
  });

  it("finds a loose object or a record where there is one (the check itself)", () => {
    expect(openings(z.object({ a: z.array(z.looseObject({ b: z.string() })) }))).toEqual(["$.a[] (loose)"]);
    expect(openings(z.object({ a: z.record(z.string(), z.string()).nullable() }))).toEqual(["$.a (record)"]);
    expect(openings(z.strictObject({ a: z.string() }))).toEqual([]);
  });
});
