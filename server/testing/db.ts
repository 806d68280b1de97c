import { getDb } from "@/server/db";

/** The test file's own database (see setup-env.ts). */
export const testDb = () => getDb();

export async function disconnectDb() {
  const g = globalThis as unknown as { airlockPrisma?: { $disconnect(): Promise<void> } };
  await g.airlockPrisma?.$disconnect();
  g.airlockPrisma = undefined;
}
