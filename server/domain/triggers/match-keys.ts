// One predicate per match key. Each returns null on a match or the reason it missed, so a
// skipped rule can say exactly why (stored with the trigger proof and shown on /triggers).
import picomatch from "picomatch";
import { normaliseJobName } from "@/server/domain/ci-events/failure/normalise";

export type Miss = string | null;

const q = (s: string) => JSON.stringify(s);

export function matchExact(key: string, wanted: string | null, actual: string | null): Miss {
  if (wanted === null) return null;
  if (actual === null) return `${key}: the event has none, the rule wants ${q(wanted)}`;
  return actual === wanted ? null : `${key}: ${q(actual)} is not ${q(wanted)}`;
}

/** A job rule "test" also matches its matrix legs "test (ubuntu-latest, 20)". */
export function matchJob(wanted: string | null, actual: string | null): Miss {
  if (wanted === null) return null;
  if (actual === null) return `job: the event has none, the rule wants ${q(wanted)}`;
  return actual === wanted || normaliseJobName(actual) === wanted ? null : `job: ${q(actual)} is not ${q(wanted)}`;
}

const globCache = new Map<string, (s: string) => boolean>();
function glob(pattern: string): (s: string) => boolean {
  let m = globCache.get(pattern);
  if (!m) {
    m = picomatch(pattern, { dot: true });
    globCache.set(pattern, m);
  }
  return m;
}

/** Branch globs use picomatch: "main", "release/*", "feature/**", "v2.*" (tags for releases). */
export function matchBranch(wanted: string | null, actual: string | null, what = "branch"): Miss {
  if (wanted === null) return null;
  if (actual === null) return `${what}: unknown, the rule wants ${q(wanted)}`;
  const name = actual.replace(/^refs\/(?:heads|tags)\//, "");
  return glob(wanted)(name) ? null : `${what}: ${q(name)} does not match ${q(wanted)}`;
}

/**
 * Path filters: a changed file counts when it matches a positive filter (or there are none) and
 * no "!negated" filter; the rule matches when at least one changed file counts. Unknown changed
 * files never match a filtered rule (fail closed).
 */
export function matchPaths(filters: readonly string[], changed: readonly string[] | null): Miss {
  if (filters.length === 0) return null;
  if (changed === null) return "paths: changed files are unknown and the rule filters on them";
  const positive = filters.filter((f) => !f.startsWith("!"));
  const negative = filters.filter((f) => f.startsWith("!")).map((f) => f.slice(1));
  const counts = (file: string) =>
    (positive.length === 0 || positive.some((p) => glob(p)(file))) && !negative.some((n) => glob(n)(file));
  if (changed.some(counts)) return null;
  return changed.length === 0
    ? "paths: no files changed"
    : `paths: none of ${changed.length} changed file${changed.length === 1 ? "" : "s"} match ${filters.join(", ")}`;
}

export function matchSignature(wanted: string | null, actual: string | null): Miss {
  if (wanted === null) return null;
  if (actual === null) return `failureSignature: not computed for this event, the rule wants ${wanted}`;
  return actual.toLowerCase() === wanted.toLowerCase() ? null : `failureSignature: ${actual} is not ${wanted}`;
}

export function matchRepository(
  rule: { repositoryId: string | null; repositoryFullName?: string | null },
  repository: { id: string; fullName: string },
): Miss {
  if (rule.repositoryId !== null && rule.repositoryId !== repository.id) {
    return `repository: ${repository.fullName} is not the rule's repository`;
  }
  const name = rule.repositoryFullName ?? null;
  if (name !== null && name.toLowerCase() !== repository.fullName.toLowerCase()) {
    return `repository: ${repository.fullName} is not ${name}`;
  }
  return null;
}
