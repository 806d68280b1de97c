// Reads a V8 CPU profile (`node --cpu-prof`) and sums self time per function and per module, so a
// bench can print where its process spent its time. Idle time (waiting on PostgreSQL) is kept
// apart from the rest.
import { readFileSync } from "node:fs";

type ProfileNode = { id: number; callFrame: { functionName: string; url: string; lineNumber: number } };
type Profile = { nodes: ProfileNode[]; samples: number[]; timeDeltas: number[] };

export type SelfTime = { name: string; ms: number; share: number };
export type ProfileSummary = { totalMs: number; idleMs: number; functions: SelfTime[]; modules: SelfTime[] };

/** A module name: the npm package, the repository path, "node-core", or "(native)" (V8 and syscalls). */
function moduleOf(url: string): string {
  if (!url) return "(native)";
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (pkg) return pkg[1]!;
  if (url.startsWith("node:")) return "node-core";
  if (url.startsWith("wasm://")) return "(wasm)";
  const repo = /\/(server|bench|scripts|app|components)\/.*$/.exec(url);
  return repo ? repo[0].slice(1) : url;
}

export function summariseProfile(path: string, top = 5): ProfileSummary {
  const profile = JSON.parse(readFileSync(path, "utf8")) as Profile;
  const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
  const self = new Map<number, number>();
  profile.samples.forEach((id, i) => self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)));
  const functions = new Map<string, number>();
  const modules = new Map<string, number>();
  let total = 0;
  let idle = 0;
  for (const [id, us] of self) {
    const frame = nodes.get(id)?.callFrame;
    if (!frame) continue;
    total += us;
    if (frame.functionName === "(idle)") {
      idle += us;
      continue;
    }
    const mod = moduleOf(frame.url);
    const name = `${frame.functionName || "(anonymous)"} ${mod}${frame.url ? `:${frame.lineNumber + 1}` : ""}`;
    functions.set(name, (functions.get(name) ?? 0) + us);
    modules.set(mod, (modules.get(mod) ?? 0) + us);
  }
  const busy = total - idle;
  const ranked = (m: Map<string, number>) =>
    [...m]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([name, us]) => ({ name, ms: us / 1000, share: busy > 0 ? us / busy : 0 }));
  return { totalMs: total / 1000, idleMs: idle / 1000, functions: ranked(functions), modules: ranked(modules) };
}

export function printProfile(summary: ProfileSummary, label: string) {
  const line = (s: SelfTime) => `  ${s.ms.toFixed(0).padStart(7)} ms ${(100 * s.share).toFixed(1).padStart(5)}%  ${s.name}`;
  console.log(`\nCPU profile of ${label}: ${summary.totalMs.toFixed(0)} ms sampled, ${summary.idleMs.toFixed(0)} ms idle (waiting); shares are of the busy time.`);
  console.log("top functions by self time:");
  for (const f of summary.functions) console.log(line(f));
  console.log("top modules by self time:");
  for (const m of summary.modules) console.log(line(m));
}
