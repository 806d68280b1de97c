// What the schema in prisma/schema.prisma and the database built by the SQL
// migrations each say the tables look like, in one shape, and the differences.
// The drift test (schema-drift.int.test.ts) keeps the two in step.
//
// The expected side comes from Prisma's own parser: the `prisma` package ships
// prisma-schema-wasm (build/prisma_schema_build_bg.wasm, the engine behind
// `getDMMF`) but no importable JS binding for it, so a small loader for its four
// wasm-bindgen imports lives here. The migration engine is not used.
import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import type { ClientBase } from "pg";
import { z } from "zod";

// ---------------------------------------------------------------- the common shape

/** A column as PostgreSQL spells it: `format_type` (quotes dropped), NULL-ability, canonical default. */
export interface Column { type: string; nullable: boolean; default: string | null }
/** `columns` carry " DESC" (and NULLS FIRST/LAST where not PostgreSQL's default for the direction). */
export interface Index { table: string; primary: boolean; unique: boolean; method: string; columns: string[]; predicate: string | null }
/** Referential actions in SQL spelling: CASCADE, SET NULL, RESTRICT, NO ACTION, SET DEFAULT. */
export interface ForeignKey {
  table: string; name: string; columns: string[]; refTable: string; refColumns: string[]; onDelete: string; onUpdate: string;
}
export interface DbSchema {
  enums: Map<string, string[]>;
  tables: Map<string, Map<string, Column>>;
  /** By index name (unique per schema in PostgreSQL); includes primary keys. */
  indexes: Map<string, Index>;
  /** By `${table}.${constraint name}`. */
  foreignKeys: Map<string, ForeignKey>;
}
export const emptySchema = (): DbSchema => ({ enums: new Map(), tables: new Map(), indexes: new Map(), foreignKeys: new Map() });

/** Any database default satisfies `@default(dbgenerated())` without an expression. */
const ANY_DEFAULT = "dbgenerated()";

// ---------------------------------------------------------------- DMMF from the wasm parser

const zName = z.string();
const zDbName = z.string().nullish();
const zLiteral = z.union([z.string(), z.number(), z.boolean()]);
const zField = z.object({
  name: zName, dbName: zDbName, kind: z.enum(["scalar", "object", "enum", "unsupported"]), type: z.string(),
  isList: z.boolean(), isRequired: z.boolean(),
  nativeType: z.tuple([z.string(), z.array(z.string())]).nullish(),
  default: z.union([z.object({ name: z.string(), args: z.array(z.unknown()) }), z.array(zLiteral), zLiteral]).optional(),
  relationFromFields: z.array(z.string()).optional(), relationToFields: z.array(z.string()).optional(),
  relationOnDelete: z.string().optional(), relationOnUpdate: z.string().optional(),
});
const zDatamodel = z.object({
  models: z.array(z.object({ name: zName, dbName: z.string().nullable(), fields: z.array(zField) })),
  enums: z.array(z.object({ name: zName, dbName: zDbName, values: z.array(z.object({ name: zName, dbName: zDbName })) })),
  indexes: z.array(z.object({
    model: zName, type: z.enum(["id", "normal", "unique", "fulltext"]), dbName: zDbName, algorithm: z.string().optional(),
    fields: z.array(z.object({ name: zName, sortOrder: z.enum(["asc", "desc"]).optional() })),
  })),
});
export type Datamodel = z.infer<typeof zDatamodel>;
type Field = Datamodel["models"][number]["fields"][number];

interface SchemaWasm {
  memory: WebAssembly.Memory;
  __wbindgen_externrefs: WebAssembly.Table;
  __wbindgen_malloc(size: number, align: number): number;
  __wbindgen_free(ptr: number, size: number, align: number): void;
  __externref_table_dealloc(idx: number): void;
  __wbindgen_start(): void;
  get_dmmf(ptr: number, len: number): [number, number, number, number];
}

let wasm: SchemaWasm | undefined;
let panicMessage = "";

async function schemaWasm(): Promise<SchemaWasm> {
  if (wasm) return wasm;
  const prismaDir = dirname(createRequire(import.meta.url).resolve("prisma/package.json"));
  const compiled = await WebAssembly.compile(await readFile(join(prismaDir, "build", "prisma_schema_build_bg.wasm")));
  // The imports below run only after `api` is assigned (from __wbindgen_start on).
  const text = (ptr: number, len: number) => new TextDecoder().decode(new Uint8Array(api.memory.buffer, ptr >>> 0, len));
  // wasm-bindgen suffixes import names with a hash that changes per build: match by prefix.
  const handlers: [string, (ptr: number, len: number) => unknown][] = [
    ["__wbg_set_message_", (ptr, len) => void (panicMessage = text(ptr, len))],
    ["__wbg_Error_", (ptr, len) => new Error(text(ptr, len))],
    ["__wbg___wbindgen_throw_", (ptr, len) => { throw new Error(text(ptr, len)); }],
    ["__wbindgen_init_externref_table", () => {
      const table = api.__wbindgen_externrefs;
      const base = table.grow(4);
      table.set(0, undefined);
      [undefined, null, true, false].forEach((value, i) => table.set(base + i, value));
    }],
  ];
  const imports: Record<string, Record<string, (ptr: number, len: number) => unknown>> = {};
  for (const imp of WebAssembly.Module.imports(compiled)) {
    const handler = handlers.find(([prefix]) => imp.name.startsWith(prefix))?.[1];
    if (!handler) throw new Error(`prisma-schema-wasm wants an unknown import ${imp.name}: update server/db/schema-introspect.ts`);
    (imports[imp.module] ??= {})[imp.name] = handler;
  }
  const api = (await WebAssembly.instantiate(compiled, imports)).exports as unknown as SchemaWasm;
  api.__wbindgen_start();
  wasm = api;
  return api;
}

/** Parses and validates a Prisma schema with Prisma's own parser; throws Prisma's errors. */
export async function loadDatamodel(schema: string): Promise<Datamodel> {
  // DMMF does not carry a relation's `map:` name, so the foreign key names below
  // would be guessed wrong; refuse rather than report a false drift.
  if (/@relation\([^)]*\bmap\s*:/.test(schema)) throw new Error("@relation(map: ...) is not supported by the drift check");
  const w = await schemaWasm();
  const input = new TextEncoder().encode(JSON.stringify({ prismaSchema: schema, noColor: true }));
  const ptr = w.__wbindgen_malloc(input.length, 1);
  new Uint8Array(w.memory.buffer).set(input, ptr);
  let result: [number, number, number, number];
  try {
    result = w.get_dmmf(ptr, input.length); // takes ownership of the input buffer
  } catch (err) {
    wasm = undefined; // a panic leaves the instance unusable
    throw new Error(`prisma-schema-wasm panicked: ${panicMessage || String(err)}`);
  }
  const [outPtr, outLen, errIdx, failed] = result;
  if (failed) {
    const error: unknown = w.__wbindgen_externrefs.get(errIdx);
    w.__externref_table_dealloc(errIdx);
    const raw = error instanceof Error ? error.message : String(error);
    const message = (() => { try { return String(JSON.parse(raw).message); } catch { return raw; } })();
    throw new Error(`schema.prisma is invalid:\n${message}`);
  }
  const json = new TextDecoder().decode(new Uint8Array(w.memory.buffer, outPtr, outLen));
  w.__wbindgen_free(outPtr, outLen, 1);
  return zDatamodel.parse(JSON.parse(json).datamodel);
}

// ---------------------------------------------------------------- what Prisma would create

const SCALAR_TYPES: Record<string, string> = {
  String: "text", Boolean: "boolean", Int: "integer", BigInt: "bigint", Float: "double precision",
  Decimal: "numeric(65,30)", DateTime: "timestamp(3) without time zone", Json: "jsonb", Bytes: "bytea",
};
const PLAIN_NATIVE: Record<string, string> = {
  Text: "text", Uuid: "uuid", Xml: "xml", Inet: "inet", Citext: "citext", Money: "money", Oid: "oid",
  Boolean: "boolean", Json: "json", JsonB: "jsonb", ByteA: "bytea", SmallInt: "smallint", Integer: "integer",
  BigInt: "bigint", Real: "real", DoublePrecision: "double precision", Date: "date",
};
const SIZED_NATIVE: Record<string, [string, string]> = {
  VarChar: ["character varying", ""], Char: ["character", ""], Decimal: ["numeric", ""], Bit: ["bit", ""],
  VarBit: ["bit varying", ""], Timestamp: ["timestamp", " without time zone"], Timestamptz: ["timestamp", " with time zone"],
  Time: ["time", " without time zone"], Timetz: ["time", " with time zone"],
};
const NUMERIC = new Set(["Int", "BigInt", "Float", "Decimal"]);
// Client-side generators: Prisma fills these in, the column has no default.
const CLIENT_DEFAULTS = new Set(["cuid", "uuid", "nanoid", "ulid"]);
const ACTIONS: Record<string, string> = {
  Cascade: "CASCADE", SetNull: "SET NULL", Restrict: "RESTRICT", NoAction: "NO ACTION", SetDefault: "SET DEFAULT",
};

/** Prisma's default constraint name: `{table}_{columns}{suffix}`, cut to PostgreSQL's 63 bytes. */
export function prismaConstraintName(table: string, columns: string[], suffix: string): string {
  const base = columns.length ? `${table}_${columns.join("_")}` : table;
  return base.slice(0, 63 - suffix.length) + suffix;
}

const quoteLiteral = (s: string) => `'${s.replaceAll("'", "''")}'`;

function columnType(field: Field, enumNames: Map<string, string>): string {
  const [native, args = []] = field.nativeType ?? [];
  let type = field.kind === "enum" ? enumNames.get(field.type) : SCALAR_TYPES[field.type];
  if (native) {
    const sized = SIZED_NATIVE[native];
    type = sized ? `${sized[0]}${args.length ? `(${args.join(",")})` : ""}${sized[1]}` : PLAIN_NATIVE[native];
  }
  if (!type) throw new Error(`no PostgreSQL type known for ${field.name}: ${field.type} ${native ?? ""}`);
  return field.isList ? `${type}[]` : type;
}

function columnDefault(field: Field, enumValues: Map<string, Map<string, string>>): string | null {
  const d = field.default;
  if (d === undefined) return null;
  if (typeof d === "object" && !Array.isArray(d)) {
    if (CLIENT_DEFAULTS.has(d.name)) return null;
    if (d.name === "now") return "now()";
    if (d.name === "autoincrement") return "autoincrement()";
    if (d.name === "dbgenerated") return d.args.length ? normalizeSqlDefault(String(d.args[0])) : ANY_DEFAULT;
    throw new Error(`unsupported default ${d.name}() on ${field.name}`);
  }
  const literal = (v: string | number | boolean): string => {
    if (typeof v === "boolean" || NUMERIC.has(field.type)) return String(v);
    if (field.kind === "enum") return quoteLiteral(enumValues.get(field.type)?.get(String(v)) ?? String(v));
    return quoteLiteral(String(v));
  };
  return normalizeSqlDefault(Array.isArray(d) ? `ARRAY[${d.map(literal).join(", ")}]` : literal(d));
}

/** The tables, enums, indexes and foreign keys Prisma's migrate would create for this datamodel. */
export function expectedSchema(dm: Datamodel): DbSchema {
  const out = emptySchema();
  const enumNames = new Map(dm.enums.map((e) => [e.name, e.dbName ?? e.name]));
  const enumValues = new Map(dm.enums.map((e) => [e.name, new Map(e.values.map((v) => [v.name, v.dbName ?? v.name]))]));
  for (const e of dm.enums) out.enums.set(e.dbName ?? e.name, e.values.map((v) => v.dbName ?? v.name));

  const models = new Map(dm.models.map((m) => [m.name, m]));
  const tableOf = (model: string) => models.get(model)?.dbName ?? model;
  const columnOf = (model: string, field: string) =>
    models.get(model)?.fields.find((f) => f.name === field)?.dbName ?? field;

  for (const model of dm.models) {
    const table = tableOf(model.name);
    const columns = new Map<string, Column>();
    for (const field of model.fields) {
      if (field.kind === "object") continue;
      // Prisma leaves list columns nullable even when the field is required.
      const nullable = !field.isRequired || field.isList;
      columns.set(field.dbName ?? field.name, { type: columnType(field, enumNames), nullable, default: columnDefault(field, enumValues) });
    }
    out.tables.set(table, columns);

    for (const rel of model.fields) {
      const from = rel.relationFromFields ?? [];
      if (rel.kind !== "object" || from.length === 0) continue;
      const cols = from.map((f) => columnOf(model.name, f));
      const name = prismaConstraintName(table, cols, "_fkey");
      // Prisma's referential-action defaults: Restrict for required relations, SetNull for optional; updates cascade.
      const onDelete = rel.relationOnDelete ?? (rel.isRequired ? "Restrict" : "SetNull");
      const onUpdate = rel.relationOnUpdate ?? "Cascade";
      out.foreignKeys.set(`${table}.${name}`, {
        table, name, columns: cols, refTable: tableOf(rel.type),
        refColumns: (rel.relationToFields ?? []).map((f) => columnOf(rel.type, f)),
        onDelete: ACTIONS[onDelete] ?? onDelete, onUpdate: ACTIONS[onUpdate] ?? onUpdate,
      });
    }
  }

  for (const idx of dm.indexes) {
    if (idx.type === "fulltext") throw new Error(`fulltext index on ${idx.model} is not a PostgreSQL feature`);
    const table = tableOf(idx.model);
    const cols = idx.fields.map((f) => columnOf(idx.model, f.name));
    const suffix = { id: "_pkey", unique: "_key", normal: "_idx" }[idx.type];
    const name = idx.dbName ?? prismaConstraintName(table, idx.type === "id" ? [] : cols, suffix);
    out.indexes.set(name, {
      table, primary: idx.type === "id", unique: idx.type !== "normal",
      method: (idx.algorithm ?? "BTree").toLowerCase(),
      columns: idx.fields.map((f, i) => `${cols[i]}${f.sortOrder === "desc" ? " DESC" : ""}`),
      predicate: null,
    });
  }
  return out;
}

/** The same for a prisma/schema.prisma file. */
export async function expectedSchemaFromFile(path: string): Promise<DbSchema> {
  return expectedSchema(await loadDatamodel(await readFile(path, "utf8")));
}

// ---------------------------------------------------------------- what the database has

const CAST = /^::(?:[a-z_]\w*\.)?(?:"(?:[^"]|"")*"|[a-z_]\w*(?: (?:varying|precision))?(?:\(\d+(?:,\s*\d+)?\))?(?: with(?:out)? time zone)?)(?:\[\])*/i;

/**
 * A default expression in canonical form, so `pg_get_expr` output and Prisma's
 * intent compare equal: casts dropped (outside string literals), CURRENT_TIMESTAMP
 * as now(), a serial's nextval(...) as autoincrement(), quoted numbers unquoted.
 */
export function normalizeSqlDefault(expr: string | null): string | null {
  if (expr === null) return null;
  if (/^nextval\(/i.test(expr)) return "autoincrement()";
  let out = "";
  for (let i = 0; i < expr.length; ) {
    if (expr[i] === "'") {
      let j = i + 1;
      while (j < expr.length && !(expr[j] === "'" && expr[j + 1] !== "'")) j += expr[j] === "'" ? 2 : 1;
      out += expr.slice(i, j + 1);
      i = j + 1;
      continue;
    }
    const cast = CAST.exec(expr.slice(i));
    if (cast) i += cast[0].length;
    else out += expr[i++];
  }
  out = out.trim();
  if (/^(current_timestamp|now\(\))$/i.test(out)) return "now()";
  return /^'(-?\d+(?:\.\d+)?)'$/.exec(out)?.[1] ?? out;
}

const PG_ACTIONS: Record<string, string> = { a: "NO ACTION", r: "RESTRICT", c: "CASCADE", n: "SET NULL", d: "SET DEFAULT" };

/** Reads the current schema (normally `public`) of a database, leaving out `_prisma_migrations`. */
export async function readDbSchema(db: ClientBase): Promise<DbSchema> {
  const out = emptySchema();
  const inSchema = `n.nspname = current_schema()`;
  const enums = await db.query<{ name: string; values: string[] }>(`
    SELECT t.typname AS name,
           array(SELECT e.enumlabel FROM pg_enum e WHERE e.enumtypid = t.oid ORDER BY e.enumsortorder)::text[] AS values
    FROM pg_type t JOIN pg_namespace n ON n.oid = t.typnamespace
    WHERE t.typtype = 'e' AND ${inSchema}`);
  for (const e of enums.rows) out.enums.set(e.name, e.values);

  const columns = await db.query<{ table: string; column: string; type: string; not_null: boolean; default: string | null; identity: string; generated: string }>(`
    SELECT c.relname AS table, a.attname AS column, format_type(a.atttypid, a.atttypmod) AS type,
           a.attnotnull AS not_null, pg_get_expr(d.adbin, d.adrelid) AS default, a.attidentity AS identity,
           a.attgenerated AS generated
    FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
    JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
    LEFT JOIN pg_attrdef d ON d.adrelid = c.oid AND d.adnum = a.attnum
    WHERE c.relkind IN ('r', 'p') AND c.relname <> '_prisma_migrations' AND ${inSchema}
    ORDER BY c.relname, a.attnum`);
  for (const c of columns.rows) {
    if (!out.tables.has(c.table)) out.tables.set(c.table, new Map());
    // Identity and generated columns are not something schema.prisma can say: show them as such.
    const def = c.identity ? "generated as identity" : c.generated ? `generated as (${c.default})` : normalizeSqlDefault(c.default);
    out.tables.get(c.table)?.set(c.column, { type: c.type.replaceAll('"', ""), nullable: !c.not_null, default: def });
  }

  // indoption bit 0 = DESC, bit 1 = NULLS FIRST; shown only where it differs from the direction's default.
  const indexes = await db.query<{ table: string; name: string; primary: boolean; unique: boolean; method: string; predicate: string | null; columns: string[] }>(`
    SELECT t.relname AS table, i.relname AS name, x.indisprimary AS primary, x.indisunique AS unique, am.amname AS method,
           pg_get_expr(x.indpred, x.indrelid) AS predicate,
           array(SELECT coalesce(a.attname::text, pg_get_indexdef(x.indexrelid, k.ord::int, true))
                        || CASE WHEN x.indoption[k.ord - 1] & 1 = 1 THEN ' DESC' ELSE '' END
                        || CASE WHEN (x.indoption[k.ord - 1] & 3) = 2 THEN ' NULLS FIRST'
                                WHEN (x.indoption[k.ord - 1] & 3) = 1 THEN ' NULLS LAST' ELSE '' END
                 FROM unnest(x.indkey::int2[]) WITH ORDINALITY k(attnum, ord)
                 LEFT JOIN pg_attribute a ON a.attrelid = x.indrelid AND a.attnum = k.attnum AND k.attnum > 0
                 WHERE k.ord <= x.indnkeyatts ORDER BY k.ord)::text[] AS columns
    FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid JOIN pg_class t ON t.oid = x.indrelid
    JOIN pg_namespace n ON n.oid = t.relnamespace JOIN pg_am am ON am.oid = i.relam
    WHERE t.relname <> '_prisma_migrations' AND ${inSchema}`);
  for (const { name, ...idx } of indexes.rows) out.indexes.set(name, idx);

  const fks = await db.query<{ table: string; name: string; columns: string[]; ref_table: string; ref_columns: string[]; del: string; upd: string }>(`
    SELECT t.relname AS table, c.conname AS name, r.relname AS ref_table, c.confdeltype AS del, c.confupdtype AS upd,
           array(SELECT a.attname FROM unnest(c.conkey) WITH ORDINALITY k(n, ord)
                 JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = k.n ORDER BY k.ord)::text[] AS columns,
           array(SELECT a.attname FROM unnest(c.confkey) WITH ORDINALITY k(n, ord)
                 JOIN pg_attribute a ON a.attrelid = c.confrelid AND a.attnum = k.n ORDER BY k.ord)::text[] AS ref_columns
    FROM pg_constraint c JOIN pg_class t ON t.oid = c.conrelid JOIN pg_class r ON r.oid = c.confrelid
    JOIN pg_namespace n ON n.oid = t.relnamespace
    WHERE c.contype = 'f' AND ${inSchema}`);
  for (const fk of fks.rows) {
    out.foreignKeys.set(`${fk.table}.${fk.name}`, {
      table: fk.table, name: fk.name, columns: fk.columns, refTable: fk.ref_table, refColumns: fk.ref_columns,
      onDelete: PG_ACTIONS[fk.del] ?? fk.del, onUpdate: PG_ACTIONS[fk.upd] ?? fk.upd,
    });
  }
  return out;
}

// ---------------------------------------------------------------- the comparison

const list = (xs: string[]) => `(${xs.join(", ")})`;

/**
 * Every difference between what schema.prisma implies and what the SQL built,
 * one sentence each, naming the object, e.g.
 * `column "AgentDispatchRun"."title": nullable in SQL, required in schema.prisma`.
 * Empty when they agree. Indexes and keys of a table missing on either side are
 * not listed separately: the table's own line says it.
 */
export function compareSchema(expected: DbSchema, actual: DbSchema): string[] {
  const out: string[] = [];
  const both = <T>(exp: Map<string, T>, act: Map<string, T>, what: (key: string) => string | null, same: (key: string, e: T, a: T) => void) => {
    for (const [key, e] of exp) {
      const a = act.get(key);
      const label = what(key);
      if (a !== undefined) same(key, e, a);
      else if (label) out.push(`${label}: in schema.prisma, missing in SQL`);
    }
    for (const key of act.keys()) {
      const label = what(key);
      if (!exp.has(key) && label) out.push(`${label}: in SQL, not in schema.prisma`);
    }
  };
  const differs = (label: string, sql: string, prisma: string) => {
    if (sql !== prisma) out.push(`${label}: ${sql} in SQL, ${prisma} in schema.prisma`);
  };
  const inBoth = (table: string) => expected.tables.has(table) && actual.tables.has(table);

  both(expected.enums, actual.enums, (name) => `enum "${name}"`, (name, e, a) => {
    for (const v of e) if (!a.includes(v)) out.push(`enum "${name}": value '${v}' in schema.prisma, missing in SQL`);
    for (const v of a) if (!e.includes(v)) out.push(`enum "${name}": value '${v}' in SQL, not in schema.prisma`);
  });

  both(expected.tables, actual.tables, (t) => `table "${t}"`, (table, e, a) => {
    both(e, a, (c) => `column "${table}"."${c}"`, (column, ec, ac) => {
      const label = `column "${table}"."${column}"`;
      differs(label, `type ${ac.type}`, `type ${ec.type}`);
      if (ac.nullable !== ec.nullable) {
        out.push(`${label}: ${ac.nullable ? "nullable" : "NOT NULL"} in SQL, ${ec.nullable ? "nullable" : "required"} in schema.prisma`);
      }
      if (!(ec.default === ANY_DEFAULT && ac.default !== null)) {
        differs(label, `default ${ac.default ?? "(none)"}`, `default ${ec.default ?? "(none)"}`);
      }
    });
  });

  const indexLabel = (name: string) => {
    const idx = expected.indexes.get(name) ?? actual.indexes.get(name);
    if (!idx || !inBoth(idx.table)) return null;
    return `${idx.primary ? "primary key" : "index"} "${name}" on "${idx.table}" ${list(idx.columns)}`;
  };
  both(expected.indexes, actual.indexes, indexLabel, (name, e, a) => {
    const label = `${e.primary ? "primary key" : "index"} "${name}"`;
    differs(label, `on "${a.table}"`, `on "${e.table}"`);
    differs(label, `columns ${list(a.columns)}`, `columns ${list(e.columns)}`);
    differs(label, a.primary ? "primary key" : a.unique ? "unique" : "not unique", e.primary ? "primary key" : e.unique ? "unique" : "not unique");
    differs(label, `using ${a.method}`, `using ${e.method}`);
    differs(label, `where ${a.predicate ?? "(none)"}`, `where ${e.predicate ?? "(none)"}`);
  });

  const fkLabel = (key: string) => {
    const fk = expected.foreignKeys.get(key) ?? actual.foreignKeys.get(key);
    if (!fk || !inBoth(fk.table)) return null;
    return `foreign key "${fk.name}" on "${fk.table}" ${list(fk.columns)} -> "${fk.refTable}" ${list(fk.refColumns)}`;
  };
  both(expected.foreignKeys, actual.foreignKeys, fkLabel, (_key, e, a) => {
    const label = `foreign key "${e.name}" on "${e.table}"`;
    differs(label, `columns ${list(a.columns)}`, `columns ${list(e.columns)}`);
    differs(label, `references "${a.refTable}" ${list(a.refColumns)}`, `references "${e.refTable}" ${list(e.refColumns)}`);
    differs(label, `ON DELETE ${a.onDelete}`, `ON DELETE ${e.onDelete}`);
    differs(label, `ON UPDATE ${a.onUpdate}`, `ON UPDATE ${e.onUpdate}`);
  });
  return out.sort();
}
