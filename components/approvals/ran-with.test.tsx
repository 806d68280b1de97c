import { renderToStaticMarkup } from "react-dom/server";
import { describe, expect, it } from "vitest";
import { zRanWith } from "@/server/domain/runs/schemas";
import { RanWithView } from "./ran-with";

// The stored record as the screen renders it (server/domain/runs/attempt-launch.test.tsx builds
// one from a real launch plan and checks no secret value reaches it or the screen).

const record = {
  attemptNumber: 1,
  launch: {
    adapter: "command",
    model: "anthropic/claude-sonnet-4-5",
    command: ["claude", "-p", "--output-format", "stream-json", "--append-system-prompt=two words"],
    files: [],
    env: [{ name: "ANTHROPIC_API_KEY", from: "a grant" }],
    tools: ["Read"],
    mcpServers: [],
    secrets: ["ANTHROPIC_API_KEY"],
    configMaps: [],
    withheld: ["secret GITHUB_TOKEN: not granted"],
    continuation: "Continuation of run #4: a fresh session (run #4 stored no Claude session); the prompt carries a bounded summary of the transcript so far and the new text.",
  },
};

describe("RanWithView", () => {
  it("quotes only the arguments that need it, shows what was withheld and how a continuation launched", () => {
    const html = renderToStaticMarkup(<RanWithView ranWith={zRanWith.parse(record)} />);
    expect(html).toContain("claude -p --output-format stream-json &quot;--append-system-prompt=two words&quot;");
    expect(html).toContain("secret GITHUB_TOKEN: not granted");
    expect(html).toContain("Continuation of run #4: a fresh session");
    expect(html).toContain("ANTHROPIC_API_KEY (a grant)");
    expect(html).not.toContain("Generated file");
  });

  it("says so when the adapter started no process", () => {
    const html = renderToStaticMarkup(<RanWithView ranWith={zRanWith.parse({ ...record, launch: { ...record.launch, adapter: "scripted", command: [] } })} />);
    expect(html).toContain("No process: the adapter reported no command line.");
  });
});
