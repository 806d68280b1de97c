import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { seed } from "@/prisma/seed";
import type { SessionUser } from "@/server/auth/roles";
import { getDb } from "@/server/db";
import { callerFor, createRepository, createUser } from "@/server/testing/factories";
import type { Story } from "./story";

// The story panel tells each reader only what a run they can see holds: through the real
// procedure (demo.story) on the seeded demo, a stranger and a member of another repository get
// every scene empty (no summary naming a run, no link, no "how"), and a member of one seeded
// repository gets links only to that repository's runs and approvals.

const db = getDb();
let dataDir: string;

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), "airlock-story-"));
  await seed(db, { dataDir });
}, 120_000);
afterAll(async () => {
  await rm(dataDir, { recursive: true, force: true });
});

const storyOf = (user: SessionUser) => callerFor(user).demo.story() as Promise<Story>;

/** The repository behind each link (a run's or an approval's run's); pages without one are skipped. */
async function linkedRepositories(story: Story): Promise<string[]> {
  const ids: string[] = [];
  for (const href of story.scenes.flatMap((s) => s.links.map((l) => l.href))) {
    const [, page, id] = href.split("/");
    if (page === "runs") ids.push((await db.agentDispatchRun.findUniqueOrThrow({ where: { id: decodeURIComponent(id!) } })).repositoryId);
    else if (page === "approvals") ids.push((await db.approvalRequest.findUniqueOrThrow({ where: { id: decodeURIComponent(id!) }, include: { run: true } })).run.repositoryId);
  }
  return ids;
}

function expectNothingShown(story: Story) {
  for (const s of story.scenes) {
    expect(s.links, s.key).toEqual([]);
    expect(s.how, s.key).toBeNull();
    expect(s.summary, s.key).not.toMatch(/#\d+|Run #/);
  }
}

describe("the story panel's reach", () => {
  it("shows a global admin the seeded scenes (so the empty answers below are refusals, not an empty demo)", async () => {
    const story = await storyOf(await createUser({ isAdmin: true }));
    const by = Object.fromEntries(story.scenes.map((s) => [s.key, s]));
    for (const key of ["fork", "escalation", "attribution"]) expect(by[key]!.links.length, key).toBeGreaterThan(0);
  });

  it("shows a stranger nothing", async () => {
    expectNothingShown(await storyOf(await createUser()));
  });

  it("shows a member of another repository nothing of the seeded ones", async () => {
    const member = await createUser();
    await createRepository({ members: [[member, "admin"]] });
    expectNothingShown(await storyOf(member));
  });

  it("shows a member of one seeded repository only that repository's runs and approvals", async () => {
    const payments = await db.repository.findUniqueOrThrow({ where: { fullName: "acme/payments-api" } });
    const member = await createUser();
    await db.membership.create({ data: { userId: member.id, repositoryId: payments.id, role: "maintainer" } });
    const story = await storyOf(member);
    const by = Object.fromEntries(story.scenes.map((s) => [s.key, s]));
    // The fork PR is a payments-api run; the escalation and the attributions are acme/web-console's.
    expect(by.fork!.links.length).toBeGreaterThan(0);
    expect(by.escalation!.links).toEqual([]);
    expect(by.attribution!.links).toEqual([]);
    expect(new Set(await linkedRepositories(story))).toEqual(new Set([payments.id]));
  });
});
