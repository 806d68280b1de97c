import type { Prisma, PrismaClient } from "@/server/db";
import { writeBackExtraOf } from "@/server/domain/approvals/presented";
import { maxFrozenReportChars, type PresentedRelease } from "@/server/domain/approvals/schemas";
import { prTitle } from "@/server/domain/writebacks/open-pr";
import { releaseNotes, releaseTagOf } from "@/server/domain/writebacks/publish-release";
import { listLocalReleases, publishLocalRelease } from "@/server/forges/local/publish-release";
import { storeLocalNote } from "@/server/forges/local/write-back";

// What the seeded write-backs name on the local forge, made there (idempotent):
//
// Notes. The seeded comments the console shows as executed name a note on the pull request's
// conversation (their external ref). On the local forge that note is a file beside the
// repository, written here in the comment executor's own format (storeLocalNote), so each ref
// names a note that exists and a reconciling executor finds it by its key. The same note is
// written again with the same content.

// Keys of an install seeded before keys took the forge's file-name form ("airlock:<run>:...")
// are left without a note rather than failing the seed.
const storableKey = /^[A-Za-z0-9_-]{1,100}$/;

async function seedNotes(db: PrismaClient, dataDir: string): Promise<number> {
  const rows = await db.writeBack.findMany({
    where: { kind: "comment", outcome: "succeeded", externalRef: { not: null }, run: { repository: { forge: "local" } } },
    select: { kind: true, idempotencyKey: true, externalRef: true, artifactDigest: true, target: true, completedAt: true, createdAt: true, run: { select: { id: true, number: true, repository: { select: { fullName: true } } } } },
  });
  const stored = rows.filter((w) => storableKey.test(w.idempotencyKey));
  for (const w of stored) {
    const prNumber = (w.target as { prNumber?: unknown } | null)?.prNumber;
    const artifact = w.artifactDigest ? await db.artifact.findFirst({ where: { runId: w.run.id, digest: w.artifactDigest }, select: { content: true } }) : null;
    await storeLocalNote(dataDir, w.run.repository.fullName, {
      kind: w.kind,
      key: w.idempotencyKey,
      message: artifact?.content ?? `Airlock run #${w.run.number}`,
      prNumber: typeof prNumber === "number" ? prNumber : null,
      createdAt: w.completedAt ?? w.createdAt,
      id: w.externalRef!,
    });
  }
  return stored.length;
}

// Releases. A seeded publish_release request carries the release frozen as requestPublishRelease
// freezes it (tag, commit, name, notes, artifact and report, by the same functions), so approving
// the pending one publishes offline; the executed one is published on the local forge by its own
// executor (an annotated tag or the pushed tag at its commit, and the release record), so its
// "release <tag>" names a release that exists. Skipped once the request carries its release.
async function seedReleases(db: PrismaClient, dataDir: string): Promise<number> {
  const approvals = await db.approvalRequest.findMany({
    where: { action: "publish_release" },
    select: {
      id: true,
      presented: true,
      run: { select: { id: true, number: true, headSha: true, contextBundle: true, repository: { select: { fullName: true, forge: true } } } },
      writeBack: { select: { id: true, idempotencyKey: true, outcome: true, target: true } },
    },
  });
  let made = 0;
  for (const a of approvals) {
    const presented = (a.presented ?? {}) as Prisma.JsonObject;
    const tag = releaseTagOf(a.run);
    if (presented.release || !tag) continue;
    const report = await db.artifact.findFirst({ where: { runId: a.run.id, kind: "report" }, orderBy: { createdAt: "desc" }, select: { id: true, name: true, digest: true, sizeBytes: true, content: true } });
    if (!report?.content) continue;
    const chars = [...report.content];
    const release: PresentedRelease = {
      tag,
      commitSha: a.run.headSha,
      name: prTitle(tag),
      notes: releaseNotes({ tag, runNumber: a.run.number, artifact: report, report }),
      artifact: { id: report.id, name: report.name, digest: report.digest, sizeBytes: report.sizeBytes },
      report: { id: report.id, name: report.name, digest: report.digest, content: chars.slice(0, maxFrozenReportChars).join(""), cut: chars.length > maxFrozenReportChars },
    };
    const wb = a.writeBack;
    // A forge directory kept across databases (a reset database, the e2e servers) already holds
    // the release, published for an earlier seed's write-back: it is the release named.
    const published = async () => (await listLocalReleases(dataDir, a.run.repository.fullName)).some((r) => r.tag === tag);
    if (wb?.outcome === "succeeded" && a.run.repository.forge === "local" && !(await published())) {
      await publishLocalRelease(dataDir, {
        kind: "publish_release",
        idempotencyKey: wb.idempotencyKey,
        runId: a.run.id,
        approvalId: a.id,
        target: { repository: a.run.repository.fullName, branch: tag, headSha: a.run.headSha },
        message: "",
        release: { tag, name: release.name, notes: release.notes, commitSha: release.commitSha, artifact: { name: report.name, digest: report.digest, content: report.content } },
      });
    }
    await db.approvalRequest.update({ where: { id: a.id }, data: { presented: { ...presented, release } as Prisma.InputJsonObject } });
    if (wb) await db.writeBack.update({ where: { id: wb.id }, data: { target: { ...((wb.target ?? {}) as Prisma.JsonObject), ...writeBackExtraOf({ release }) } as Prisma.InputJsonObject } });
    made++;
  }
  return made;
}

export async function seedForgeObjects(db: PrismaClient, dataDir: string): Promise<{ notes: number; releases: number }> {
  return { notes: await seedNotes(db, dataDir), releases: await seedReleases(db, dataDir) };
}
