// What a release is, as the release keys (release-keys.ts) and its readiness gaps see it: the
// version, the artifacts it ships (chart packages, npm tarballs, images, checksum files), the
// checksum files' entries where they were read, the branches its tag's commit is on and the
// versions the repository's files declare at that commit. Pure; evaluation/release-facts.ts reads
// them from the event, the delivery and (local forge) the bare repository. Nothing here needs Node.

/** Longest version a release key compares; a longer tag is refused whole (subjectOf). */
export const MAX_RELEASE_VERSION = 100;
/** A checksum file is read up to this size and this many entries. */
export const MAX_CHECKSUM_BYTES = 64 * 1024;
export const MAX_CHECKSUM_ENTRIES = 500;

export type ReleaseArtifact = {
  name: string;
  /** The pipeline's word ("chart", "npm", "image", "checksum") or a forge content type. */
  type: string;
  digest: string | null;
};

export type ChecksumFile = {
  name: string;
  /** Its lines as (file, sha256 hex); null when not read, with `unread` saying why. */
  entries: { file: string; sha256: string }[] | null;
  unread: string | null;
  /** The digest of the bytes that were read (sha256:<hex>), to hold them against the file's own digest. */
  readDigest: string | null;
};

export type RepositoryVersionFile = { path: string; kind: "chart" | "npm"; name: string; version: string | null; appVersion: string | null };

export type ReleaseFacts = {
  tag: string;
  version: string;
  commitSha: string | null;
  artifacts: ReleaseArtifact[];
  checksums: ChecksumFile[];
  /** Branches the tag's commit is on; null: unknown. */
  branches: string[] | null;
  /** Where `branches` comes from, or why it is unknown (shown with every release-branch verdict). */
  branchesFrom: string;
  /** Chart.yaml and package.json versions at the tag's commit; null: not read (and `filesFrom` says why). */
  files: RepositoryVersionFile[] | null;
  filesFrom: string;
};

/** What a readiness gap can be (release-keys.ts releaseGaps). */
export const RELEASE_GAP_KINDS = ["missing_artifact", "checksum_mismatch", "checksum_unlisted", "checksum_unverified", "version_mismatch"] as const;
export type GapKind = (typeof RELEASE_GAP_KINDS)[number];

export type ReleaseKey = "version" | "chart" | "npm" | "image" | "checksum" | "releaseBranch";

export type ReleaseRule = {
  releaseVersion?: string | null;
  releaseChart?: string | null;
  releaseNpmPackage?: string | null;
  releaseImage?: string | null;
  releaseChecksum?: string | null;
  releaseBranch?: string | null;
};

/** The release keys a rule sets, with the rule's value, in the order they are checked. */
export function releaseKeysOf(rule: ReleaseRule): [ReleaseKey, string][] {
  const keys: [ReleaseKey, string | null | undefined][] = [
    ["version", rule.releaseVersion],
    ["chart", rule.releaseChart],
    ["npm", rule.releaseNpmPackage],
    ["image", rule.releaseImage],
    ["checksum", rule.releaseChecksum],
    ["releaseBranch", rule.releaseBranch],
  ];
  return keys.flatMap(([k, v]) => (v === null || v === undefined ? [] : [[k, v] as [ReleaseKey, string]]));
}

const VERSION_PART = /^\d[0-9A-Za-z.+-]{0,99}$/;

/** npm pack's file name stem for a package: "@acme/web" -> "acme-web". */
export const npmStem = (pkg: string) => pkg.replace(/^@/, "").replace("/", "-");

/** The version in `<stem>-<version>.tgz`, or null when the name is not that. */
export function packagedVersion(name: string, stem: string): string | null {
  if (!name.startsWith(`${stem}-`) || !name.endsWith(".tgz")) return null;
  const version = name.slice(stem.length + 1, -".tgz".length);
  return VERSION_PART.test(version) ? version : null;
}

/** Chart packages of `chart` the release ships (helm package names them `<chart>-<version>.tgz`). */
export function chartPackages(facts: Pick<ReleaseFacts, "artifacts">, chart: string) {
  return facts.artifacts.flatMap((a) => {
    const version = a.type === "npm" ? null : packagedVersion(a.name, chart);
    return version === null ? [] : [{ artifact: a, version }];
  });
}

/** npm tarballs of `pkg` the release ships (npm pack names them `<scope>-<name>-<version>.tgz`). */
export function npmPackages(facts: Pick<ReleaseFacts, "artifacts">, pkg: string) {
  return facts.artifacts.flatMap((a) => {
    const version = a.type === "chart" ? null : packagedVersion(a.name, npmStem(pkg));
    return version === null ? [] : [{ artifact: a, version }];
  });
}

/** Images `<image>:<tag>` the release ships (artifacts of type "image"). */
export function imageTags(facts: Pick<ReleaseFacts, "artifacts">, image: string) {
  return facts.artifacts.flatMap((a) => {
    if (a.type !== "image" || !a.name.startsWith(`${image}:`)) return [];
    const tag = a.name.slice(image.length + 1);
    return /^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$/.test(tag) ? [{ artifact: a, version: tag }] : [];
  });
}

/**
 * Entries of a sha256sum file ("<hex>  <file>" or "<hex> *<file>") or a BSD one
 * ("SHA256 (<file>) = <hex>"); other lines are ignored. Bounded in size and entries.
 */
export function parseChecksums(text: string): { file: string; sha256: string }[] {
  const entries: { file: string; sha256: string }[] = [];
  for (const line of text.slice(0, MAX_CHECKSUM_BYTES).split(/\r?\n/)) {
    const gnu = /^([0-9a-fA-F]{64}) [ *](.{1,255})$/.exec(line.trim() === "" ? "" : line);
    const bsd = /^SHA256 \((.{1,255})\) = ([0-9a-fA-F]{64})$/.exec(line.trim());
    if (gnu?.[1] && gnu[2]) entries.push({ file: gnu[2].trim(), sha256: gnu[1].toLowerCase() });
    else if (bsd?.[1] && bsd[2]) entries.push({ file: bsd[1], sha256: bsd[2].toLowerCase() });
    if (entries.length >= MAX_CHECKSUM_ENTRIES) break;
  }
  return entries;
}

/** "sha256:<hex>" -> "<hex>" (lower case); null for another algorithm or none. */
export function sha256Of(digest: string | null): string | null {
  const m = digest ? /^sha256:([0-9a-fA-F]{64})$/.exec(digest) : null;
  return m?.[1] ? m[1].toLowerCase() : null;
}
