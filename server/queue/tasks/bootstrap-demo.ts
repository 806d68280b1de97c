import { env } from "@/server/env";
import { bootstrapDemo } from "@/server/forges/local/demo";
import type { WorkerContext } from "../worker-context";

/** "demo.bootstrap": the demo repository in the local forge, and its first (failing) check. */
export async function bootstrapDemoTask(_payload: unknown, ctx: WorkerContext): Promise<void> {
  const result = await bootstrapDemo({
    db: ctx.db,
    dataDir: ctx.settings.dataDir,
    ciTimeoutMs: ctx.settings.ciTimeoutMs,
    toolchainNodeModules: ctx.settings.toolchainNodeModules,
    log: ctx.log,
    scenes: !env.AIRLOCK_DEMO_LOOP_ONLY,
  });
  ctx.log(`demo: ${result.summary}`);
}
