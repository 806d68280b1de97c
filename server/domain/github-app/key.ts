import { resolve } from "node:path";
import { env } from "@/server/env";
import { loadSealingKey, type SealingKey } from "./sealed";

let key: SealingKey | null = null;

/** This installation's sealing key (AIRLOCK_SECRET_KEY or the data folder's secret.key). */
export function sealingKey(): SealingKey {
  key ??= loadSealingKey({ envKey: env.AIRLOCK_SECRET_KEY ?? null, dataDir: resolve(env.AIRLOCK_DATA_DIR) });
  return key;
}
