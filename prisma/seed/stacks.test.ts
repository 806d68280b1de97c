import { describe, expect, it } from "vitest";
import { stackSnapshot, zStackSpec } from "@/server/domain/stacks/spec";
import { stacks } from "./stacks";

// A seeded install keeps the stack versions it stored (seedStacks skips duplicates), and its
// seeded runs cite their digests. So a seeded version's spec must not change under a refactor of
// how it is written (the scripted demo stacks share a base): these are the digests of the specs
// as first seeded, for a fixed stack id. A deliberate change to a seeded spec belongs in a new
// version, not in an edit of one an install already holds.
const pinned: Record<string, string> = {
  "claude-code-ci-diagnoser@1": "sha256:e9d50652317bf87697f1f70c475bd2d4e7dd886e9ce904f6165d1507c7fb2d3a",
  "claude-code-ci-diagnoser@2": "sha256:2981c8928c583c3a8bb6c9b89f32cb5d5b755892f485032e50bd22bf741c295b",
  "scripted-demo-fixer@1": "sha256:6618a11b893cbacab3d1ce30aa991740342eae8fe6a10d48d31aeec888ab5e37",
  "scripted-demo-budget@1": "sha256:4fe6ca069f13421088ab89db8c2747a8be34dfe3a3f2b1d7f26f078f0293cdd8",
  "scripted-demo-privileged@1": "sha256:42d34fb0a73673f822c3e018cdc0579ff70114365976b4337e13b7582e232dfc",
  "release-reviewer@1": "sha256:a2ae5bfd904fe7175be572e8d6959a143a2b292222039da13138dfd5c08c38bc",
};

describe("seeded stack versions", () => {
  it("keep the digests an existing install stored", () => {
    const digests = Object.fromEntries(
      stacks.flatMap((s) => s.versions.map((v) => [`${s.name}@${v.version}`, stackSnapshot({ id: "x", name: s.name, version: v.version, spec: zStackSpec.parse(v.spec) }).digest])),
    );
    expect(digests).toEqual(pinned);
  });
});
