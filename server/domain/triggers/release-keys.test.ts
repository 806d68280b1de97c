import { describe, expect, it } from "vitest";
import { parseChecksums, type ReleaseFacts } from "./release-facts";
import { releaseGaps, releaseVerdicts } from "./release-keys";

const hex = (c: string) => c.repeat(64);
const facts = (patch: Partial<ReleaseFacts> = {}): ReleaseFacts => ({
  tag: "v2.1.0",
  version: "2.1.0",
  commitSha: "a".repeat(40),
  artifacts: [
    { name: "airlock-2.1.0.tgz", type: "chart", digest: `sha256:${hex("1")}` },
    { name: "acme-web-2.1.0.tgz", type: "npm", digest: `sha256:${hex("2")}` },
    { name: "SHA256SUMS", type: "checksum", digest: "sha256:sums" },
  ],
  checksums: [{ name: "SHA256SUMS", entries: [{ file: "airlock-2.1.0.tgz", sha256: hex("1") }, { file: "acme-web-2.1.0.tgz", sha256: hex("2") }], unread: null, readDigest: "sha256:sums" }],
  branches: ["main", "release/2.x"],
  branchesFrom: "local git",
  files: [],
  filesFrom: "local git",
  ...patch,
});
const rule = { releaseChart: "airlock", releaseNpmPackage: "@acme/web", releaseChecksum: "SHA256SUMS" };

describe("releaseGaps", () => {
  it("finds none in a release whose versions line up and whose checksums hold", () => {
    expect(releaseGaps(rule, facts())).toEqual([]);
  });

  it("names a package whose version is not the release's, and a repository file that says otherwise", () => {
    const f = facts({
      artifacts: [{ name: "airlock-2.0.9.tgz", type: "chart", digest: null }],
      checksums: [],
      files: [{ path: "package.json", kind: "npm", name: "@acme/web", version: "2.0.0", appVersion: null }],
    });
    expect(releaseGaps({ releaseChart: "airlock", releaseNpmPackage: "@acme/web" }, f).map((g) => g.id)).toEqual(["version_mismatch:airlock-2.0.9.tgz", "version_mismatch:package.json"]);
  });

  it("holds the checksum file against the artifacts both ways, and against its own digest", () => {
    const lying = facts({ checksums: [{ name: "SHA256SUMS", entries: [{ file: "airlock-2.1.0.tgz", sha256: hex("9") }, { file: "gone.zip", sha256: hex("3") }], unread: null, readDigest: "sha256:sums" }] });
    expect(releaseGaps(rule, lying).map((g) => g.id)).toEqual(["checksum_mismatch:airlock-2.1.0.tgz", "missing_artifact:gone.zip", "checksum_unlisted:acme-web-2.1.0.tgz"]);
    const swapped = facts({ checksums: [{ ...facts().checksums[0]!, readDigest: "sha256:other" }] });
    expect(releaseGaps(rule, swapped).map((g) => g.kind)).toEqual(["checksum_mismatch"]);
    const unread = facts({ checksums: [{ name: "SHA256SUMS", entries: null, unread: "no content", readDigest: null }] });
    expect(releaseGaps(rule, unread).map((g) => g.kind)).toEqual(["checksum_unverified"]);
  });
});

describe("release keys", () => {
  it("reports every key's verdict, the unknown release branch included", () => {
    expect(releaseVerdicts({ releaseVersion: "2.*", releaseBranch: "release/*" }, facts({ branches: null, branchesFrom: "GitHub's event names no branch for this tag" }))).toEqual([
      { key: "version", matched: true, detail: 'version "2.1.0" matches "2.*"' },
      { key: "releaseBranch", matched: false, detail: `release branch: unknown (GitHub's event names no branch for this tag), the rule wants "release/*"` },
    ]);
  });

  it("parses sha256sum and BSD checksum lines and ignores the rest", () => {
    expect(parseChecksums(`${hex("a")}  a.tgz\n${hex("B")} *b.tgz\nSHA256 (c.tgz) = ${hex("c")}\nnot a line\n`)).toEqual([
      { file: "a.tgz", sha256: hex("a") },
      { file: "b.tgz", sha256: hex("b") },
      { file: "c.tgz", sha256: hex("c") },
    ]);
  });
});
