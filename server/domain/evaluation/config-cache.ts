// What evaluation reads from configuration, cached in this process under the configuration's
// generation: each repository's live trigger rules, and the repository a delivery names (or that
// none is registered under the name). A counter that database triggers bump in every transaction
// that changes TriggerRule or Repository (migration 20261204160001); evaluation reads it with the
// delivery's row (one statement, evaluate.ts readDelivery), so the cache costs no statement: a hit
// when the generation is the one an entry was loaded under, else a reload. The generation is read
// before the entry, so an entry loaded under it is at least that new; a change committed before a
// delivery is read takes effect for that delivery, in every worker process.
import type { Db, Repository } from "@/server/db";
import { findRepository } from "./load";
import { liveRulesFor } from "./plan";

export type LiveRules = Readonly<Awaited<ReturnType<typeof liveRulesFor>>>;
type Entry<T> = { generation: string; value: T };

const MAX_ENTRIES = 2000;

/** A bounded map, least recently used first out, one per database client and kind. */
class GenerationCache<T> {
  // Per client: tests (and the bench) talk to more than one database from one process.
  private readonly maps = new WeakMap<object, Map<string, Entry<T>>>();

  async get(db: Db, key: string, generation: string | null, load: () => Promise<T>): Promise<T> {
    if (generation === null) return load();
    let map = this.maps.get(db);
    if (!map) this.maps.set(db, (map = new Map()));
    const hit = map.get(key);
    map.delete(key);
    if (hit && hit.generation === generation) {
      map.set(key, hit);
      return hit.value;
    }
    const value = await load();
    if (map.size >= MAX_ENTRIES) map.delete(map.keys().next().value ?? "");
    map.set(key, { generation, value });
    return value;
  }
}

const rules = new GenerationCache<LiveRules>();
const repositories = new GenerationCache<Repository | null>();

/**
 * The repository's live rules (plan.ts liveRulesFor) as of `generation` (null: unknown, read
 * them). The returned array is shared between evaluations: callers only read it.
 */
export function cachedLiveRules(db: Db, repositoryId: string, generation: string | null): Promise<LiveRules> {
  return rules.get(db, repositoryId, generation, async () => Object.freeze(await liveRulesFor(db, repositoryId)));
}

/** load.ts findRepository as of `generation`; the row is shared between evaluations (read only). */
export function cachedRepository(db: Db, fullName: string, generation: string | null): Promise<Repository | null> {
  return repositories.get(db, fullName, generation, async () => {
    const row = await findRepository(db, fullName);
    return row ? Object.freeze(row) : null;
  });
}
