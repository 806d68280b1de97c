import { parseScenario, type Scenario } from "../scenario";
import releaseReadiness from "./release-readiness.json" with { type: "json" };
import sumOffByOne from "./sum-off-by-one.json" with { type: "json" };

// Built-in scenarios for the scripted adapter, by name (a stack's
// `adapter.scenario`). Imported rather than read from disk so bundlers ship them.

const builtIn: Record<string, unknown> = {
  "sum-off-by-one": sumOffByOne,
  // A release review leaving only a readiness report (e2e/loop/publish-release.spec.ts publishes it).
  "release-readiness": releaseReadiness,
};

export const builtInScenarioNames = Object.keys(builtIn);

const cache = new Map<string, Scenario>();

/** The validated built-in scenario with that name, or undefined. */
export function getBuiltInScenario(name: string): Scenario | undefined {
  const raw = builtIn[name];
  if (raw === undefined) return undefined;
  let scenario = cache.get(name);
  if (!scenario) {
    scenario = parseScenario(raw, `built-in scenario ${name}`);
    cache.set(name, scenario);
  }
  return scenario;
}
