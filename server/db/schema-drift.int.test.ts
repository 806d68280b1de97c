import { fileURLToPath } from "node:url";
import { beforeAll, describe, expect, it } from "vitest";
import { migrate } from "@/server/db/migrator.mjs";
import {
  compareSchema,
  emptySchema,
  expectedSchema,
  expectedSchemaFromFile,
  loadDatamodel,
  normalizeSqlDefault,
  prismaConstraintName,
  readDbSchema,
  type DbSchema,
} from "@/server/db/schema-introspect";
import { emptyDatabases, withClient } from "@/server/testing/empty-database";

// Schema and SQL never drift: every migration applied to an EMPTY database must
// give exactly what prisma/schema.prisma describes, as Prisma's migrate would build it.
const schemaFile = fileURLToPath(new URL("../../prisma/schema.prisma", import.meta.url));
const databases = emptyDatabases("drift");

/** A new empty database with every migration applied, then `extraSql` (if any). */
async function migratedDatabase(extraSql?: string): Promise<DbSchema> {
  const url = await databases.create();
  await migrate({ connectionString: url });
  return withClient(url, async (c) => {
    if (extraSql) await c.query(extraSql);
    return readDbSchema(c);
  });
}

let expected: DbSchema;
beforeAll(async () => {
  expected = await expectedSchemaFromFile(schemaFile);
});

describe("prisma/schema.prisma and prisma/migrations", () => {
  it("describe the same tables, columns, types, defaults, indexes, foreign keys and enums", async () => {
    const actual = await migratedDatabase();

    expect(compareSchema(expected, actual)).toEqual([]);
    // Guard against an empty-equals-empty pass.
    expect(actual.tables.size).toBeGreaterThan(20);
    expect(actual.indexes.size).toBeGreaterThan(actual.tables.size);
    expect(actual.foreignKeys.size).toBeGreaterThan(20);
    expect(actual.enums.size).toBeGreaterThan(10);
  });

  it("reports exactly the difference each drifting statement makes", async () => {
    const actual = await migratedDatabase(`
      ALTER TABLE "AgentDispatchRun" ALTER COLUMN "title" DROP NOT NULL;
      ALTER TABLE "Job" ADD COLUMN "retries" INTEGER NOT NULL DEFAULT 0;
      ALTER TABLE "DispatchAttempt" ALTER COLUMN "costUsd" TYPE DECIMAL(10,2);
      ALTER TABLE "Repository" ALTER COLUMN "defaultBranch" SET DEFAULT 'master';
      ALTER TABLE "PullRequest" ALTER COLUMN "labels" DROP DEFAULT;
      ALTER TABLE "Session" ALTER COLUMN "updatedAt" SET DEFAULT now();
      DROP INDEX "AuditEntry_createdAt_idx";
      DROP INDEX "AgentDispatchRun_createdAt_id_idx";
      CREATE INDEX "AgentDispatchRun_createdAt_id_idx" ON "AgentDispatchRun" ("createdAt", "id" DESC);
      ALTER TABLE "Session" DROP CONSTRAINT "Session_userId_fkey";
      ALTER TABLE "Session" ADD CONSTRAINT "Session_userId_fkey" FOREIGN KEY ("userId") REFERENCES "User"("id") ON DELETE SET NULL ON UPDATE CASCADE;
      ALTER TYPE "RunStatus" ADD VALUE 'paused';
      CREATE TABLE "Scratch" (id int);
      ALTER TABLE "Job" ALTER COLUMN "step" SET NOT NULL;
      ALTER TABLE "Artifact" DROP COLUMN "location";
      DROP INDEX "User_email_key";
      CREATE INDEX "User_email_key" ON "User" ("email");
      DROP INDEX "Job_failureSignature_idx";
      CREATE INDEX "Job_failureSignature_idx" ON "Job" USING hash ("failureSignature");
      DROP INDEX "WriteBack_runId_idx";
      CREATE INDEX "WriteBack_runId_idx" ON "WriteBack" ("runId") WHERE "outcome" = 'pending';
      ALTER TABLE "RunEvent" DROP CONSTRAINT "RunEvent_pkey";
      ALTER TABLE "RunEvent" ADD CONSTRAINT "RunEvent_pkey" PRIMARY KEY ("runId", "seq", "type");
      ALTER TABLE "TriggerDrop" ADD CONSTRAINT "TriggerDrop_runId_fkey" FOREIGN KEY ("runId") REFERENCES "AgentDispatchRun"("id");
      ALTER TABLE "Account" DROP CONSTRAINT "Account_userId_fkey";
      ALTER TABLE "Account" ADD CONSTRAINT "Account_userId_fkey" FOREIGN KEY ("userId") REFERENCES "User"("id") ON DELETE CASCADE ON UPDATE NO ACTION;
    `);

    expect(compareSchema(expected, actual)).toEqual([
      `column "AgentDispatchRun"."title": nullable in SQL, required in schema.prisma`,
      `column "Artifact"."location": in schema.prisma, missing in SQL`,
      `column "DispatchAttempt"."costUsd": type numeric(10,2) in SQL, type numeric(12,6) in schema.prisma`,
      `column "Job"."retries": in SQL, not in schema.prisma`,
      `column "Job"."step": NOT NULL in SQL, nullable in schema.prisma`,
      `column "PullRequest"."labels": default (none) in SQL, default ARRAY[] in schema.prisma`,
      `column "Repository"."defaultBranch": default 'master' in SQL, default 'main' in schema.prisma`,
      `column "Session"."updatedAt": default now() in SQL, default (none) in schema.prisma`,
      `enum "RunStatus": value 'paused' in SQL, not in schema.prisma`,
      `foreign key "Account_userId_fkey" on "Account": ON UPDATE NO ACTION in SQL, ON UPDATE CASCADE in schema.prisma`,
      `foreign key "Session_userId_fkey" on "Session": ON DELETE SET NULL in SQL, ON DELETE CASCADE in schema.prisma`,
      `foreign key "TriggerDrop_runId_fkey" on "TriggerDrop" (runId) -> "AgentDispatchRun" (id): in SQL, not in schema.prisma`,
      `index "AgentDispatchRun_createdAt_id_idx": columns (createdAt, id DESC) in SQL, columns (createdAt DESC, id DESC) in schema.prisma`,
      `index "AuditEntry_createdAt_idx" on "AuditEntry" (createdAt DESC): in schema.prisma, missing in SQL`,
      `index "Job_failureSignature_idx": using hash in SQL, using btree in schema.prisma`,
      `index "User_email_key": not unique in SQL, unique in schema.prisma`,
      `index "WriteBack_runId_idx": where (outcome = 'pending'::"WriteBackOutcome") in SQL, where (none) in schema.prisma`,
      `primary key "RunEvent_pkey": columns (runId, seq, type) in SQL, columns (runId, seq) in schema.prisma`,
      `table "Scratch": in SQL, not in schema.prisma`,
    ]);
  });
});

describe("expectedSchema", () => {
  it("reads schema.prisma the way Prisma migrate writes SQL", () => {
    const run = expected.tables.get("AgentDispatchRun");
    expect(run?.get("id")).toEqual({ type: "text", nullable: false, default: null }); // cuid() is client-side
    expect(run?.get("number")).toEqual({ type: "integer", nullable: false, default: "autoincrement()" });
    expect(run?.get("costUsd")).toEqual({ type: "numeric(12,6)", nullable: false, default: "0" });
    expect(run?.get("createdAt")).toEqual({ type: "timestamp(3) with time zone", nullable: false, default: "now()" });
    expect(run?.get("admission")).toEqual({ type: "jsonb", nullable: true, default: null });
    expect(run?.get("status")).toEqual({ type: "RunStatus", nullable: false, default: null });
    expect(expected.tables.get("Session")?.get("updatedAt")?.default).toBeNull(); // @updatedAt alone
    const repo = expected.tables.get("Repository");
    expect(repo?.get("forge")).toEqual({ type: "ForgeKind", nullable: false, default: "'local'" });
    expect(repo?.get("writeBackExceptions")).toEqual({ type: "WriteBackKind[]", nullable: true, default: "ARRAY[]" });
    expect(expected.indexes.get("AgentDispatchRun_repositoryId_createdAt_id_idx")).toEqual({
      table: "AgentDispatchRun", primary: false, unique: false, method: "btree",
      columns: ["repositoryId", "createdAt DESC", "id DESC"], predicate: null,
    });
    expect(expected.indexes.get("RunEvent_pkey")?.columns).toEqual(["runId", "seq"]);
    expect(expected.foreignKeys.get("RunnerPool.RunnerPool_runtimeServiceAccountId_fkey")).toMatchObject({
      refTable: "ServiceAccount", refColumns: ["id"], onDelete: "RESTRICT", onUpdate: "CASCADE",
    });
    expect(expected.foreignKeys.get("Pipeline.Pipeline_pullRequestId_fkey")?.onDelete).toBe("SET NULL");
    expect(expected.enums.get("RunSource")).toContain("resume");
  });

  it("follows @map, @@map, map: names, index types, dbgenerated and enum value names", async () => {
    const long = "A".repeat(55);
    const schema = await loadDatamodel(`
      datasource db {
        provider = "postgresql"
      }
      enum Color {
        red @map("RED")
        green
        @@map("colors")
      }
      model Thing {
        id    String  @id @default(dbgenerated("gen_random_uuid()")) @db.Uuid
        nums  Int[]   @default([1, 2])
        color Color   @default(red)
        label String  @map("label_col") @db.VarChar(10)
        ratio Float?  @default(1.5)
        meta  Json    @default("{}")
        parts Part[]
        @@index([label], map: "thing_label_hash", type: Hash)
        @@unique([color, ratio(sort: Desc)])
        @@map("things")
      }
      model Part {
        x       String
        y       Int
        thingId String?
        thing   Thing?  @relation(fields: [thingId], references: [id])
        @@id([x, y], map: "part_pk")
      }
      model ${long} {
        id        Int    @id @default(autoincrement())
        something String @unique
      }
    `);
    const s = expectedSchema(schema);

    expect(s.enums.get("colors")).toEqual(["RED", "green"]);
    expect(Object.fromEntries(s.tables.get("things") ?? [])).toEqual({
      id: { type: "uuid", nullable: false, default: "gen_random_uuid()" },
      nums: { type: "integer[]", nullable: true, default: "ARRAY[1, 2]" },
      color: { type: "colors", nullable: false, default: "'RED'" },
      label_col: { type: "character varying(10)", nullable: false, default: null },
      ratio: { type: "double precision", nullable: true, default: "1.5" },
      meta: { type: "jsonb", nullable: false, default: "'{}'" },
    });
    expect(s.indexes.get("thing_label_hash")).toMatchObject({ table: "things", method: "hash", columns: ["label_col"] });
    expect(s.indexes.get("things_color_ratio_key")).toMatchObject({ unique: true, columns: ["color", "ratio DESC"] });
    expect(s.indexes.get("part_pk")).toMatchObject({ primary: true, columns: ["x", "y"] });
    expect(s.foreignKeys.get("Part.Part_thingId_fkey")).toEqual({
      table: "Part", name: "Part_thingId_fkey", columns: ["thingId"], refTable: "things", refColumns: ["id"],
      onDelete: "SET NULL", onUpdate: "CASCADE",
    });
    // Prisma cuts default names to PostgreSQL's 63 bytes, keeping the suffix.
    const cut = `${long}_som_key`;
    expect(cut).toHaveLength(63);
    expect(s.indexes.get(cut)?.columns).toEqual(["something"]);
    expect(prismaConstraintName(long, [], "_pkey")).toBe(`${long}_pkey`);
  });

  it("fails with Prisma's own message on an invalid schema, and refuses relation map names it cannot see", async () => {
    await expect(loadDatamodel(`model A {\n  id Strin @id\n}`)).rejects.toThrow(/Type "Strin" is neither a built-in type/);
    await expect(
      loadDatamodel(`model A {\n  id String @id\n  b B @relation(fields: [id], references: [id], map: "x")\n}\nmodel B {\n  id String @id\n  a A?\n}`),
    ).rejects.toThrow(/@relation\(map: \.\.\.\) is not supported/);
  });
});

describe("normalizeSqlDefault", () => {
  it.each([
    [`'main'::text`, `'main'`],
    [`'it''s::text'::character varying`, `'it''s::text'`],
    [`'local'::"ForgeKind"`, `'local'`],
    [`ARRAY[]::text[]`, `ARRAY[]`],
    [`ARRAY['a'::"TaskKind", 'b'::"TaskKind"]::"TaskKind"[]`, `ARRAY['a', 'b']`],
    [`CURRENT_TIMESTAMP`, `now()`],
    [`now()`, `now()`],
    [`nextval('"AgentDispatchRun_number_seq"'::regclass)`, `autoincrement()`],
    [`'-1'::integer`, `-1`],
    [`'{}'::jsonb`, `'{}'`],
    [`'2020-01-01 00:00:00'::timestamp(3) without time zone`, `'2020-01-01 00:00:00'`],
    [`false`, `false`],
  ])("%s -> %s", (sql, canonical) => {
    expect(normalizeSqlDefault(sql)).toBe(canonical);
  });
});

describe("compareSchema", () => {
  it("names missing tables and enum values once, without repeating their indexes and keys", () => {
    const want = emptySchema();
    want.tables.set("A", new Map([["id", { type: "text", nullable: false, default: null }]]));
    want.indexes.set("A_pkey", { table: "A", primary: true, unique: true, method: "btree", columns: ["id"], predicate: null });
    want.enums.set("E", ["x", "y"]);
    const have = emptySchema();
    have.enums.set("E", ["x"]);
    have.enums.set("Stray", ["z"]);

    expect(compareSchema(want, have)).toEqual([
      `enum "E": value 'y' in schema.prisma, missing in SQL`,
      `enum "Stray": in SQL, not in schema.prisma`,
      `table "A": in schema.prisma, missing in SQL`,
    ]);
    expect(compareSchema(want, want)).toEqual([]);
  });
});
