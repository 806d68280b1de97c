// The release match keys (version, chart, npm package, image, checksum file, release branch) and
// the readiness gaps of a release a rule matched. Pure: the matcher calls both, for the live path
// and the dry run alike, and the run's trigger proof records every key's verdict.
import picomatch from "picomatch";
import { chartPackages, imageTags, npmPackages, releaseKeysOf, sha256Of, type GapKind, type ReleaseArtifact, type ReleaseFacts, type ReleaseKey, type ReleaseRule } from "./release-facts";

/** One key's verdict: what fact it saw, and whether the rule's value matched it. */
export type KeyVerdict = { key: string; matched: boolean; detail: string };

const q = (s: string) => JSON.stringify(s);
const globOf = (pattern: string) => picomatch(pattern, { dot: true });

function verdictOf(key: ReleaseKey, wanted: string, facts: ReleaseFacts): KeyVerdict {
  const yes = (detail: string) => ({ key, matched: true, detail });
  const no = (detail: string) => ({ key, matched: false, detail });
  const names = (found: { artifact: ReleaseArtifact }[]) => found.map((f) => f.artifact.name).join(", ");
  switch (key) {
    case "version":
      return globOf(wanted)(facts.version) ? yes(`version ${q(facts.version)} matches ${q(wanted)}`) : no(`version: ${q(facts.version)} does not match ${q(wanted)}`);
    case "chart": {
      const found = chartPackages(facts, wanted);
      return found.length > 0 ? yes(`chart: ships ${names(found)}`) : no(`chart: the release ships no chart package ${wanted}-<version>.tgz`);
    }
    case "npm": {
      const found = npmPackages(facts, wanted);
      return found.length > 0 ? yes(`npm: ships ${names(found)}`) : no(`npm: the release ships no npm package ${q(wanted)} tarball`);
    }
    case "image": {
      const found = imageTags(facts, wanted);
      return found.length > 0 ? yes(`image: ships ${names(found)}`) : no(`image: the release ships no image ${wanted}:<tag> (GitHub release events carry no images)`);
    }
    case "checksum":
      return facts.artifacts.some((a) => a.name === wanted) ? yes(`checksum: ships ${wanted}`) : no(`checksum: the release ships no checksum file ${q(wanted)}`);
    case "releaseBranch": {
      if (facts.branches === null) return no(`release branch: unknown (${facts.branchesFrom}), the rule wants ${q(wanted)}`);
      if (facts.branches.length === 0) return no(`release branch: the tag's commit is on no branch of the repository (${facts.branchesFrom}), the rule wants ${q(wanted)}`);
      const match = facts.branches.find((b) => globOf(wanted)(b));
      const on = facts.branches.slice(0, 5).join(", ") + (facts.branches.length > 5 ? `, +${facts.branches.length - 5}` : "");
      return match ? yes(`release branch: the tag's commit is on ${match} (${facts.branchesFrom})`) : no(`release branch: the tag's commit is on ${on}, none matching ${q(wanted)} (${facts.branchesFrom})`);
    }
  }
}

/** Every release key's verdict, in order (stops at none: the proof shows them all). */
export function releaseVerdicts(rule: ReleaseRule, facts: ReleaseFacts | null): KeyVerdict[] {
  const keys = releaseKeysOf(rule);
  if (keys.length === 0) return [];
  if (facts === null) return keys.map(([key]) => ({ key, matched: false, detail: `${key}: the release's facts are unknown` }));
  return keys.map(([key, wanted]) => verdictOf(key, wanted, facts));
}

/** A publishing gap: what a person accepts (or not) before the release is published. */
export type ReleaseGap = {
  /** Stable within the run: one approval item per gap, however often it is found. */
  id: string;
  kind: GapKind;
  /** The artifact or file it is about. */
  subject: string;
  /** One sentence: what is wrong, with the facts. */
  detail: string;
};

const MAX_GAPS = 50;

/**
 * The readiness gaps of a release a rule matched: the version each named chart, npm package and
 * image (and the repository's Chart.yaml and package.json, where read) carries against the
 * release's; the named checksum file's entries against the artifacts' digests, both ways. A fact
 * that could not be read is a gap too (fail closed: a person accepts what Airlock could not check).
 */
export function releaseGaps(rule: ReleaseRule, facts: ReleaseFacts): ReleaseGap[] {
  const gaps: ReleaseGap[] = [];
  const add = (kind: GapKind, subject: string, detail: string) => gaps.push({ id: `${kind}:${subject}`.slice(0, 300), kind, subject: subject.slice(0, 255), detail: detail.slice(0, 1000) });
  const v = facts.version;
  const versioned = (what: string, found: { artifact: ReleaseArtifact; version: string }[], alsoOk: (s: string) => boolean = () => false) => {
    for (const f of found) if (f.version !== v && !alsoOk(f.version)) add("version_mismatch", f.artifact.name, `${what} ${f.artifact.name} carries version ${q(f.version)}; the release is ${q(v)}`);
  };
  if (rule.releaseChart) versioned("chart package", chartPackages(facts, rule.releaseChart));
  if (rule.releaseNpmPackage) versioned("npm package", npmPackages(facts, rule.releaseNpmPackage));
  if (rule.releaseImage) versioned("image", imageTags(facts, rule.releaseImage), (tag) => tag === `v${v}`);
  for (const file of facts.files ?? []) {
    const named = file.kind === "chart" ? rule.releaseChart : rule.releaseNpmPackage;
    if (!named || file.name !== named) continue;
    if (file.version !== v) add("version_mismatch", file.path, `${file.path} at the tag's commit says version ${q(file.version ?? "(none)")}; the release is ${q(v)}`);
    if (file.kind === "chart" && file.appVersion !== null && file.appVersion !== v && file.appVersion !== `v${v}`) {
      add("version_mismatch", `${file.path}#appVersion`, `${file.path} at the tag's commit says appVersion ${q(file.appVersion)}; the release is ${q(v)}`);
    }
  }
  if (rule.releaseChecksum) checksumGaps(rule.releaseChecksum, facts, add);
  return gaps.slice(0, MAX_GAPS);
}

function checksumGaps(name: string, facts: ReleaseFacts, add: (kind: GapKind, subject: string, detail: string) => void) {
  const file = facts.checksums.find((c) => c.name === name);
  const shipped = facts.artifacts.find((a) => a.name === name);
  if (!shipped) return;
  if (!file || file.entries === null) {
    add("checksum_unverified", name, `${name}'s entries were not read (${file?.unread ?? "no content reached Airlock"}): no artifact's digest was checked against it`);
    return;
  }
  if (shipped.digest && file.readDigest && shipped.digest !== file.readDigest) {
    add("checksum_mismatch", name, `the ${name} that was read (${file.readDigest}) is not the one the release ships (${shipped.digest})`);
    return;
  }
  const listed = new Set<string>();
  for (const e of file.entries) {
    listed.add(e.file);
    const artifact = facts.artifacts.find((a) => a.name === e.file);
    if (!artifact) add("missing_artifact", e.file, `${name} lists ${e.file}, and the release does not ship it`);
    else if (sha256Of(artifact.digest) === null) add("checksum_unverified", e.file, `${e.file} has no sha256 digest Airlock knows, so ${name}'s entry for it is unchecked`);
    else if (sha256Of(artifact.digest) !== e.sha256) add("checksum_mismatch", e.file, `${name} says ${e.file} is sha256:${e.sha256}; the artifact shipped is ${artifact.digest}`);
  }
  for (const a of facts.artifacts) {
    if (a.name !== name && !listed.has(a.name) && a.type !== "image") add("checksum_unlisted", a.name, `${a.name} ships with the release and ${name} does not list it`);
  }
}
