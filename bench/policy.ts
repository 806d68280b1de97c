// Policy engine benchmark: decisions per second on the shipped CI-triage policy, and the time of
// the three exact checks on a generated policy of 50 rules over 8 properties.
// Run: npx tsx bench/policy.ts
import { performance } from "node:perf_hooks";
import { checkCompleteness } from "@/server/domain/policy/checks/completeness";
import { checkConflicts } from "@/server/domain/policy/checks/conflicts";
import { checkNonVacuity } from "@/server/domain/policy/checks/non-vacuity";
import { evaluate } from "@/server/domain/policy/evaluate";
import { factsFrom, type Facts } from "@/server/domain/policy/facts";
import type { Condition, PolicyDefinition, PolicyDefinitionInput, PropertyDefinition } from "@/server/domain/policy/model";
import { ciTriagePolicy } from "@/server/domain/policy/shipped/ci-triage";
import { definePolicy } from "@/server/domain/policy/validate";

const TARGET_DECISIONS_PER_SECOND = 50_000;
const TARGET_CHECK_MS = 200;

/** Small seeded PRNG (mulberry32) so every run benchmarks the same policies. */
function prng(seed: number) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (lo: number, hi: number) => lo + Math.floor(next() * (hi - lo + 1));
  const pick = <T>(items: readonly T[]): T => items[int(0, items.length - 1)] as T;
  return { next, int, pick };
}

type Rng = ReturnType<typeof prng>;

const generatedProperties: PropertyDefinition[] = [
  { name: "stage", type: "enum", values: ["lint", "test", "build", "deploy", "release"], cardinality: "1", rulesOnly: false },
  { name: "source", type: "enum", values: ["webhook", "comment", "label", "manual"], cardinality: "0..1", rulesOnly: false },
  { name: "tier", type: "enum", values: ["a", "b", "c", "d", "e", "f"], cardinality: "0..1", rulesOnly: false },
  { name: "flaky", type: "boolean", cardinality: "0..1", rulesOnly: false },
  { name: "fork", type: "boolean", cardinality: "0..1", rulesOnly: false },
  { name: "reruns", type: "integer", min: 0, max: 100, cardinality: "0..1", rulesOnly: false },
  { name: "minutes", type: "integer", cardinality: "0..1", rulesOnly: false },
  { name: "branch", type: "string", cardinality: "0..1", rulesOnly: false },
];

function leaf(rng: Rng, property: PropertyDefinition): Condition {
  const name = property.name;
  if (rng.next() < 0.08) return { property: name, isEmpty: rng.next() < 0.5 };
  switch (property.type) {
    case "enum": {
      const roll = rng.next();
      if (roll < 0.4) return { property: name, is: rng.pick(property.values) };
      if (roll < 0.6) return { property: name, isNot: rng.pick(property.values) };
      return { property: name, inList: property.values.filter(() => rng.next() < 0.5).concat(rng.pick(property.values)) };
    }
    case "boolean":
      return rng.next() < 0.7 ? { property: name, is: rng.next() < 0.5 } : { property: name, isNot: rng.next() < 0.5 };
    case "integer":
      return rng.next() < 0.5 ? { property: name, below: rng.int(0, 10) } : { property: name, above: rng.int(0, 10) };
    case "string":
      return rng.next() < 0.6
        ? { property: name, is: rng.pick(["main", "release", "dev"]) }
        : { property: name, inList: ["main", "release"] };
  }
}

function condition(rng: Rng): Condition {
  const parts: Condition[] = [];
  const used = new Set<string>();
  const count = rng.int(1, 4);
  while (parts.length < count) {
    const property = rng.pick(generatedProperties);
    if (used.has(property.name)) continue;
    used.add(property.name);
    const roll = rng.next();
    if (roll < 0.12) parts.push({ any: [leaf(rng, property), leaf(rng, rng.pick(generatedProperties))] });
    else if (roll < 0.2) parts.push({ none: [leaf(rng, property)] });
    else parts.push(leaf(rng, property));
  }
  return parts.length === 1 && parts[0] ? parts[0] : { all: parts };
}

function generatePolicy(seed: number, ruleCount = 50): PolicyDefinition {
  const rng = prng(seed);
  const outcomes = ["allow", "deny", "escalate", "defer"];
  const input: PolicyDefinitionInput = {
    kind: "generated",
    name: `Generated policy ${seed}`,
    subject: "event",
    properties: [
      ...generatedProperties,
      { name: "outcome", type: "enum", values: outcomes, rulesOnly: true },
    ],
    rules: Array.from({ length: ruleCount }, (_, i) => ({
      name: `rule_${i}`,
      priority: rng.int(0, 20) * 5,
      when: condition(rng),
      then: { property: "outcome", value: rng.pick(outcomes) },
      explanation: `generated rule ${i}`,
    })),
    defaults: [{ property: "outcome", value: "escalate", explanation: "nothing matched" }],
  };
  return definePolicy(input);
}

function benchDecisions(): { decisionsPerSecond: number; decisions: number } {
  const cases: Facts[] = [
    factsFrom("api", { failing_stage: "test", known_flaky: true, prior_reruns: 0 }),
    factsFrom("webhook", { failing_stage: "lint", known_flaky: false }),
    factsFrom("api", { failing_stage: "deploy", known_flaky: false }),
    factsFrom("api", { failing_stage: "test", known_flaky: true, prior_reruns: 1, reproduces_on_rerun: true }),
    factsFrom("system", { failing_stage: "build" }),
    factsFrom("person", { failing_stage: "build", known_flaky: true, prior_reruns: 3 }),
  ];
  let sink = 0;
  for (let i = 0; i < 20_000; i++) sink += evaluate(ciTriagePolicy, cases[i % cases.length]!).rule?.length ?? 0; // warm up
  const budgetMs = 1_500;
  const start = performance.now();
  let decisions = 0;
  while (performance.now() - start < budgetMs) {
    for (let i = 0; i < 1_000; i++) {
      sink += evaluate(ciTriagePolicy, cases[decisions % cases.length]!).rule?.length ?? 0;
      decisions++;
    }
  }
  const elapsed = performance.now() - start;
  if (sink < 0) console.log(sink); // keeps the loop from being optimised away
  return { decisionsPerSecond: (decisions / elapsed) * 1000, decisions };
}

function benchChecks(seed: number) {
  // A fresh definition each time, so the cached fact space is built inside the measurement.
  const policy = generatePolicy(seed);
  const start = performance.now();
  const conflicts = checkConflicts(policy);
  const afterConflicts = performance.now();
  const gaps = checkCompleteness(policy);
  const afterGaps = performance.now();
  const vacuous = checkNonVacuity(policy);
  const end = performance.now();
  return {
    seed,
    conflictsMs: afterConflicts - start,
    completenessMs: afterGaps - afterConflicts,
    nonVacuityMs: end - afterGaps,
    totalMs: end - start,
    conflicts: conflicts.length,
    gaps: gaps.length,
    vacuous: vacuous.length,
  };
}

function main(): void {
  const decisions = benchDecisions();
  benchChecks(999); // warm up the JIT on one policy that is not reported
  const runs = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10].map(benchChecks);
  const worst = Math.max(...runs.map((r) => r.totalMs));
  const median = [...runs].sort((a, b) => a.totalMs - b.totalMs)[Math.floor(runs.length / 2)]!.totalMs;

  const ok = (pass: boolean) => (pass ? "ok" : "MISSED");
  console.log("policy engine benchmark");
  console.log("");
  console.log("| measure | result | target | |");
  console.log("| --- | --- | --- | --- |");
  console.log(
    `| ci_triage decisions/s | ${Math.round(decisions.decisionsPerSecond).toLocaleString("en")} | > ${TARGET_DECISIONS_PER_SECOND.toLocaleString("en")} | ${ok(decisions.decisionsPerSecond > TARGET_DECISIONS_PER_SECOND)} |`,
  );
  console.log(`| all three checks, 50 rules x 8 properties, median of ${runs.length} | ${median.toFixed(1)} ms | < ${TARGET_CHECK_MS} ms | ${ok(median < TARGET_CHECK_MS)} |`);
  console.log(`| all three checks, worst of ${runs.length} | ${worst.toFixed(1)} ms | < ${TARGET_CHECK_MS} ms | ${ok(worst < TARGET_CHECK_MS)} |`);
  console.log("");
  console.log("| seed | conflicts ms | completeness ms | non-vacuity ms | total ms | conflicts | gaps | vacuous |");
  console.log("| --- | --- | --- | --- | --- | --- | --- | --- |");
  for (const r of runs) {
    console.log(
      `| ${r.seed} | ${r.conflictsMs.toFixed(1)} | ${r.completenessMs.toFixed(1)} | ${r.nonVacuityMs.toFixed(1)} | ${r.totalMs.toFixed(1)} | ${r.conflicts} | ${r.gaps} | ${r.vacuous} |`,
    );
  }
}

main();
