// Prisma's CLI otherwise tries to download a native schema engine, which this
// project never uses: `prisma generate` runs on the bundled wasm engine, and
// migrations are applied by Airlock's own migrator (server/db/migrator.mjs).
process.env.PRISMA_SCHEMA_ENGINE_BINARY ??= "/bin/false";

import { defineConfig } from "prisma/config";

export default defineConfig({
  schema: "prisma/schema.prisma",
  migrations: { path: "prisma/migrations" },
  datasource: {
    // Prisma 7 reads no URL from the schema; generate needs none at all.
    url: process.env.DATABASE_URL ?? "postgresql://invalid:invalid@127.0.0.1:1/invalid",
  },
});
