import { describe, expect, it } from "vitest";
import { checkRunBody, surfaceStateOf } from "./surface";

const run = { id: "run1", number: 7, title: "Diagnose @acme/security <img src=x> failure", status: "suggested" as const, taskKind: "diagnose", failedCheck: "unit`s @octocat" };

describe("the check run's body", () => {
  it("makes a fork's title and job name inert: no mentions, no HTML, no breaking out of code", () => {
    const body = checkRunBody(run, "offered", { detailsUrl: "http://a/runs/run1", diagnosis: null });
    expect(body.output.summary).not.toMatch(/@[A-Za-z]/);
    expect(body.output.summary).not.toContain("<img");
    expect(body.output.summary).toContain("`unit's @\u200Boctocat` failed.");
    expect(body.actions.map((a) => a.identifier)).toEqual(["diagnose", "repair"]);
  });

  it("maps every run status to a check-run state, a failed run never to a failing conclusion", () => {
    expect(checkRunBody({ ...run, status: "failed" }, surfaceStateOf("failed"), { detailsUrl: "http://a", diagnosis: null })).toMatchObject({ status: "completed", conclusion: "neutral", actions: [] });
    expect(checkRunBody({ ...run, status: "running" }, surfaceStateOf("running"), { detailsUrl: "http://a", diagnosis: null })).toMatchObject({ status: "in_progress", actions: [] });
    expect(surfaceStateOf("suggested")).toBe("offered");
  });
});
