// Each repository's live trigger rules, cached in this process under the rules' generation (a
// counter a database trigger bumps in every transaction that changes TriggerRule, migration
// 20261204160001). Evaluation reads the generation with the delivery's row (one statement,
// evaluate.ts readDelivery), so the cache costs no statement: a hit when the generation is the one
// the rules were loaded under, else a reload. The generation is read before the rules, so rules
// loaded under it are at least that new; an edit committed before a delivery is read takes effect
// for that delivery, in every worker process.
import type { Db } from "@/server/db";
import { liveRulesFor } from "./plan";

type LiveRules = Awaited<ReturnType<typeof liveRulesFor>>;
type Entry = { generation: string; rules: Readonly<LiveRules> };

const MAX_REPOSITORIES = 2000;
// Per client: tests (and the bench) talk to more than one database from one process.
const caches = new WeakMap<object, Map<string, Entry>>();

/**
 * The repository's live rules (plan.ts liveRulesFor) as of `generation` (null: unknown, read
 * them). The returned array is shared between evaluations: callers only read it.
 */
export async function cachedLiveRules(db: Db, repositoryId: string, generation: string | null): Promise<Readonly<LiveRules>> {
  if (generation === null) return liveRulesFor(db, repositoryId);
  let cache = caches.get(db);
  if (!cache) caches.set(db, (cache = new Map()));
  const hit = cache.get(repositoryId);
  if (hit && hit.generation === generation) {
    // Most recently used last: the oldest entry is the first to go.
    cache.delete(repositoryId);
    cache.set(repositoryId, hit);
    return hit.rules;
  }
  const rules = Object.freeze(await liveRulesFor(db, repositoryId));
  cache.delete(repositoryId);
  if (cache.size >= MAX_REPOSITORIES) cache.delete(cache.keys().next().value ?? "");
  cache.set(repositoryId, { generation, rules });
  return rules;
}
