import { describe, expect, it } from "vitest";
import { parseBotCommand } from "./pr-command";

describe("parseBotCommand", () => {
  it.each([
    ["@agent diagnose", { kind: "command", command: "diagnose", args: "" }],
    ["@agent fix failing check", { kind: "command", command: "fix_failing_check", args: "" }],
    ["@agent fix failing checks", { kind: "command", command: "fix_failing_check", args: "" }],
    ["@agent   Fix  Failing   Check   lint  ", { kind: "command", command: "fix_failing_check", args: "lint" }],
    ["@Agent TRIAGE", { kind: "command", command: "triage", args: "" }],
    ["@agent cancel", { kind: "command", command: "cancel", args: "" }],
    ["please look\n  @agent diagnose focus on the db test\nthanks", { kind: "command", command: "diagnose", args: "focus on the db test", line: 2 }],
    ["@agent diagnosed", { kind: "unknown", text: "diagnosed" }],
    ["@agent", { kind: "unknown", text: "" }],
    ["@agentsmith diagnose", { kind: "none" }],
    ["hey @agent diagnose", { kind: "none" }],
    ["> @agent diagnose\n\nI agree", { kind: "none" }],
    ["```\n@agent diagnose\n```", { kind: "none" }],
    ["~~~\n@agent diagnose\n~~~\n@agent triage", { kind: "command", command: "triage", line: 4 }],
    ["", { kind: "none" }],
  ])("%j", (body, expected) => {
    expect(parseBotCommand(body)).toMatchObject(expected);
  });

  it("uses the first addressed line only", () => {
    expect(parseBotCommand("@agent cancel\n@agent diagnose")).toMatchObject({ command: "cancel" });
  });

  it("accepts a handle with or without @", () => {
    expect(parseBotCommand("@ci-bot diagnose", "ci-bot")).toMatchObject({ command: "diagnose" });
    expect(parseBotCommand("@agent diagnose", "@ci-bot")).toEqual({ kind: "none" });
  });
});
